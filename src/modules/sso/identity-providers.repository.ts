import type { Insertable, Kysely } from 'kysely'
import type { Database, IdentityProviderRow, IdentityProvidersTable } from '../../db/schema.js'

/** SQL of identity providers (docs/sso.md). Every tenant-scoped read takes the tenant id. */

export async function insertIdentityProvider(
  db: Kysely<Database>,
  row: Insertable<IdentityProvidersTable>,
): Promise<IdentityProviderRow> {
  return db.insertInto('identity_providers').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findTenantIdentityProvider(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<IdentityProviderRow | undefined> {
  return db
    .selectFrom('identity_providers')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** By id alone: the browser routes (/v1/sso/{providerId}/…) name only the provider. */
export async function findIdentityProvider(
  db: Kysely<Database>,
  id: string,
): Promise<IdentityProviderRow | undefined> {
  return db.selectFrom('identity_providers').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function listTenantIdentityProviders(
  db: Kysely<Database>,
  tenantId: string,
): Promise<IdentityProviderRow[]> {
  return db
    .selectFrom('identity_providers')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created')
    .orderBy('id')
    .execute()
}

/** The active providers of some tenants, {id, name}, the tenant's default first. */
export async function activeProvidersOf(
  db: Kysely<Database>,
  tenantIds: string[],
): Promise<Map<string, { id: string; name: string }[]>> {
  const byTenant = new Map<string, { id: string; name: string }[]>()
  if (tenantIds.length === 0) return byTenant
  const rows = await db
    .selectFrom('identity_providers as p')
    .innerJoin('tenants as t', 't.id', 'p.tenant_id')
    .select(['p.id', 'p.name', 'p.tenant_id', 't.default_identity_provider'])
    .where('p.tenant_id', 'in', tenantIds)
    .where('p.active', '=', true)
    .orderBy('p.created')
    .orderBy('p.id')
    .execute()
  for (const row of rows) {
    const list = byTenant.get(row.tenant_id) ?? []
    const entry = { id: row.id, name: row.name }
    if (row.default_identity_provider === row.id) list.unshift(entry)
    else list.push(entry)
    byTenant.set(row.tenant_id, list)
  }
  return byTenant
}
