import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'

/** The reads that authorization needs, kept apart from the feature modules that own these tables. */

export interface TenantPlacement {
  id: string
  name: string
  parentIds: string[]
  active: boolean
}

export interface AcceptedMembership {
  tenantId: string
  roleId: string
}

export async function findTenantPlacement(
  db: Kysely<Database>,
  tenantId: string,
): Promise<TenantPlacement | undefined> {
  const row = await db
    .selectFrom('tenants')
    .select(['id', 'name', 'parent_ids', 'active'])
    .where('id', '=', tenantId)
    .executeTakeFirst()
  return row && { id: row.id, name: row.name, parentIds: row.parent_ids, active: row.active }
}

/** A user's accepted memberships in active tenants: the ones that grant permissions. */
export async function listGrantingMemberships(
  db: Kysely<Database>,
  userId: string,
): Promise<AcceptedMembership[]> {
  const rows = await db
    .selectFrom('tenant_users as tu')
    .innerJoin('tenants as t', 't.id', 'tu.tenant_id')
    .select(['tu.tenant_id', 'tu.role_id'])
    .where('tu.user_id', '=', userId)
    .where('tu.status', '=', 'accepted')
    .where('t.active', '=', true)
    .execute()
  return rows.map((row) => ({ tenantId: row.tenant_id, roleId: row.role_id }))
}

export async function findRolePermissions(
  db: Kysely<Database>,
  roleId: string,
): Promise<string[] | undefined> {
  const row = await db.selectFrom('roles').select('permissions').where('id', '=', roleId).executeTakeFirst()
  return row?.permissions
}
