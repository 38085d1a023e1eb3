import type { Kysely } from 'kysely'
import type { Database } from '../../db/schema.js'
import { invalidField } from '../../errors.js'
import { isActiveProviderOf } from './tenants.repository.js'

/**
 * A default identity provider (of a tenant, or of a membership) must name an active provider of that
 * tenant (docs/sso.md); null clears it. 400 on `defaultIdentityProvider` otherwise.
 */
export async function checkDefaultIdentityProvider(
  db: Kysely<Database>,
  tenantId: string,
  providerId: string | null | undefined,
): Promise<void> {
  if (providerId === undefined || providerId === null) return
  const id = providerId.toLowerCase()
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)
  if (!uuid || !(await isActiveProviderOf(db, tenantId, id)))
    throw invalidField('defaultIdentityProvider', 'must name an active identity provider of this tenant')
}
