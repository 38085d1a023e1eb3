import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Database } from '../db/schema.js'
import { type EffectiveMfaPolicy, effectiveMfaPolicy, type OwnMfaPolicy } from './mfa-policy.js'

/** The reads that authorization needs, kept apart from the feature modules that own these tables. */

export interface TenantPlacement {
  id: string
  name: string
  parentIds: string[]
  active: boolean
  /** The tenant's effective second-factor policy (access/mfa-policy.ts), read with it. */
  mfa: EffectiveMfaPolicy
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
  /** When the membership was accepted: the start of the member's grace (docs/security.md, "Policy"). */
  acceptedAt: Date
}

/**
 * A tenant's place in the tree and its effective second-factor policy, in one statement: the tenant and
 * its ancestors (whose policies it inherits), read by id.
 */
export async function findTenantPlacement(
  db: Kysely<Database>,
  tenantId: string,
): Promise<TenantPlacement | undefined> {
  const rows = await db
    .selectFrom('tenants as t')
    .select(['t.id', 't.name', 't.parent_ids', 't.active'])
    .select(['t.mfa_policy', 't.mfa_grace_days', 't.mfa_accept_idp', 't.mfa_policy_since'])
    .where(
      sql<boolean>`t.id = any((select s.parent_ids || s.id from tenants s where s.id = ${tenantId})::uuid[])`,
    )
    .execute()
  const row = rows.find((r) => r.id === tenantId)
  if (!row) return undefined
  const byId = new Map(rows.map((r) => [r.id, r]))
  // From the root down to the tenant (the platform, first of parent_ids, is no tenant row).
  const lineage: OwnMfaPolicy[] = [...row.parent_ids, row.id].flatMap((id) => {
    const r = byId.get(id)
    return r
      ? [
          {
            id,
            policy: r.mfa_policy,
            graceDays: r.mfa_grace_days,
            acceptIdp: r.mfa_accept_idp,
            since: r.mfa_policy_since,
          },
        ]
      : []
  })
  return {
    id: row.id,
    name: row.name,
    parentIds: row.parent_ids,
    active: row.active,
    mfa: effectiveMfaPolicy(lineage),
  }
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

/**
 * When a membership (`tu`) was accepted: its `accepted_at`, or — written accepted, which leaves that null
 * (migration 0020) — its creation.
 */
export const membershipAcceptedAt = sql<Date>`coalesce(tu.accepted_at, tu.created)`

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
      membershipAcceptedAt.as('accepted_at'),
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
    acceptedAt: row.accepted_at,
  }))
}
