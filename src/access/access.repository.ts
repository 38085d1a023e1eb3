import { type Kysely, type RawBuilder, sql } from 'kysely'
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
  /** The role's permission names; none when the role is disabled (docs/api.md#tenant-roles). */
  permissions: string[]
  /**
   * Whether the user may use its platform password in this tenant (docs/product.md#password-rule): never when the tenant
   * denies the platform's identity provider; otherwise the membership's `noPassword`, and when that is
   * null the tenant's default (yes when `enabled`, no when `disabled`).
   */
  passwordAllowed: boolean
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

/**
 * Whether a membership lets its user use the platform password (docs/product.md#password-rule), over a query that names the
 * membership `tu` and its tenant `t`. The one place the rule is spelt. `policy`: the tenant's
 * cxengageIdentityProvider — its column, or a value it might be given (the password-policy impact).
 */
export function passwordAllowedSql(policy: RawBuilder<string> = sql<string>`t.cxengage_identity_provider`) {
  return sql<boolean>`case
        when ${policy} = 'denied' then false
        when tu.no_password is not null then not tu.no_password
        else ${policy} = 'enabled'
      end`
}

/** A role's permissions as they grant: none while the role is disabled. */
export const grantedPermissions = sql<string[]>`case when r.active then r.permissions else '{}'::text[] end`

/**
 * A user's accepted memberships in active tenants — the ones that grant permissions — with what each
 * role grants, in one statement: a caller's effective permissions cost one query (then a cache hit).
 */
export async function listGrantingMemberships(
  db: Kysely<Database>,
  userId: string,
): Promise<AcceptedMembership[]> {
  const rows = await db
    .selectFrom('tenant_users as tu')
    .innerJoin('tenants as t', 't.id', 'tu.tenant_id')
    .innerJoin('roles as r', 'r.id', 'tu.role_id')
    .select([
      'tu.tenant_id',
      'tu.role_id',
      grantedPermissions.as('permissions'),
      passwordAllowedSql().as('password_allowed'),
    ])
    .where('tu.user_id', '=', userId)
    .where('tu.status', '=', 'accepted')
    .where('t.active', '=', true)
    .execute()
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    roleId: row.role_id,
    permissions: row.permissions,
    passwordAllowed: row.password_allowed,
  }))
}
