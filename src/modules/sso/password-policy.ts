import { sql } from 'kysely'
import { type Static, Type } from 'typebox'
import { passwordAllowedSql } from '../../access/access.repository.js'
import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { Uuid } from '../../http/schemas.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import { IDENTITY_PROVIDER_STATES } from '../tenants/tenants.schemas.js'

/**
 * What changing a tenant's password policy (its `cxengageIdentityProvider`, docs/sso.md) would do, before
 * it is done (docs/sso.md#6-changing-the-tenants-password-policy: the console says first how many members would lose password sign-in). Read
 * only; counted with the one spelling of the rule (access.repository.ts passwordAllowedSql), over the
 * tenant's accepted memberships. Sub-tenants follow from it: a password that stops counting in a tenant
 * counts in none of its sub-tenants for that person.
 */

const PasswordPolicy = Type.Enum(IDENTITY_PROVIDER_STATES, { type: 'string' })

export const PasswordPolicyImpactQuery = Type.Object({
  cxengageIdentityProvider: PasswordPolicy,
})

export const PasswordPolicyImpactSchema = Type.Object({
  tenantId: Uuid(),
  current: PasswordPolicy,
  proposed: PasswordPolicy,
  members: Type.Integer({ description: 'Accepted memberships of the tenant' }),
  passwordSignIn: Type.Integer({ description: 'Of them, those who may use their password now' }),
  losePasswordSignIn: Type.Integer({ description: 'Those who may now and would not under `proposed`' }),
  gainPasswordSignIn: Type.Integer({ description: 'Those who may not now and would under `proposed`' }),
})
export type PasswordPolicyImpact = Static<typeof PasswordPolicyImpactSchema>

/** Needs MANAGE_TENANT in the tenant: whoever may change the policy may see what the change would do. */
export async function passwordPolicyImpact(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  proposed: Static<typeof PasswordPolicy>,
): Promise<PasswordPolicyImpact> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, ['MANAGE_TENANT'])
  const now = passwordAllowedSql()
  const then = passwordAllowedSql(sql<string>`${proposed}::text`)
  const row = await ctx.db
    .selectFrom('tenants as t')
    .leftJoin('tenant_users as tu', (join) =>
      join.onRef('tu.tenant_id', '=', 't.id').on('tu.status', '=', 'accepted'),
    )
    .select([
      't.cxengage_identity_provider as current',
      sql<string>`count(tu.user_id)`.as('members'),
      sql<string>`count(tu.user_id) filter (where ${now})`.as('password_now'),
      sql<string>`count(tu.user_id) filter (where ${now} and not ${then})`.as('losing'),
      sql<string>`count(tu.user_id) filter (where not ${now} and ${then})`.as('gaining'),
    ])
    .where('t.id', '=', tenant.id)
    .groupBy('t.cxengage_identity_provider')
    .executeTakeFirstOrThrow()
  return {
    tenantId: tenant.id,
    current: row.current,
    proposed,
    members: Number(row.members),
    passwordSignIn: Number(row.password_now),
    losePasswordSignIn: Number(row.losing),
    gainPasswordSignIn: Number(row.gaining),
  }
}
