import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Database } from '../../db/schema.js'
import { recordAudit } from '../audit/audit.repository.js'
import { findApiKeyCredentials, findUserCredentials } from './principals.repository.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The audit event of a login lockout (docs/webhooks.md), for a name that is a user or an API key. */
export async function recordLoginLockout(db: Kysely<Database>, clock: Clock, name: string): Promise<void> {
  const target = UUID.test(name)
    ? (await findApiKeyCredentials(db, name)) && { type: 'apiKey', id: name }
    : await findUserCredentials(db, { email: name }).then((row) => row && { type: 'user', id: row.id })
  if (!target) return
  await recordAudit(
    db,
    clock,
    { kind: 'system' },
    {
      action: target.type === 'user' ? 'user.login_locked' : 'api_key.login_locked',
      tenantId: null,
      target,
      changes: {},
    },
  )
}
