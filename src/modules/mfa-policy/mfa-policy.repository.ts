import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely'
import { grantedPermissions } from '../../access/access.repository.js'
import type { Database, MfaPolicy } from '../../db/schema.js'

/** SQL of the second-factor policy (docs/security.md, "Policy"): the platform setting, who needs a factor. */

type Executor = Kysely<Database> | Transaction<Database>

/**
 * Whether the user of `userId` (an expression naming a users.id) has a factor: an active TOTP or passkey.
 * Recovery codes are a fallback, not a factor. One exists over the user's factors (user_factors_user_idx),
 * for a list to say it of every row in its own statement.
 */
export function hasActiveFactorSql(userId: RawBuilder<string>): RawBuilder<boolean> {
  return sql<boolean>`exists (
    select 1 from user_factors f
    where f.user_id = ${userId} and f.status = 'active' and f.type in ('totp', 'webauthn'))`
}

export async function userHasActiveFactor(db: Executor, userId: string): Promise<boolean> {
  const { rows } = await sql<{
    has: boolean
  }>`select ${hasActiveFactorSql(sql`${userId}::uuid`)} as has`.execute(db)
  return rows[0]?.has === true
}

/**
 * Whether any policy requires a second factor of the person, in one statement: an accepted membership in an
 * active tenant that is, or is under, a tenant whose policy is required; or a platform role granting
 * permissions while the platform requires a factor for them.
 */
export async function policyRequiresFactorOf(db: Executor, userId: string): Promise<boolean> {
  const { rows } = await sql<{ required: boolean }>`
    select exists (
        select 1 from tenant_users tu join tenants t on t.id = tu.tenant_id
        where tu.user_id = ${userId}::uuid and tu.status = 'accepted' and t.active
          and exists (
            select 1 from tenants a
            where a.id = any(t.parent_ids || t.id) and a.mfa_policy = 'required'))
      or exists (
        select 1 from users u join roles r on r.id = u.role_id join platform p on true
        where u.id = ${userId}::uuid and p.mfa_for_platform_roles = 'required'
          and cardinality(${grantedPermissions}) > 0) as required`.execute(db)
  return rows[0]?.required === true
}

export async function readPlatformMfa(db: Executor): Promise<MfaPolicy> {
  const row = await db.selectFrom('platform').select('mfa_for_platform_roles').executeTakeFirstOrThrow()
  return row.mfa_for_platform_roles
}

/** Sets the platform's setting, answering the value it replaced (the row is locked for the change). */
export async function writePlatformMfa(tx: Executor, value: MfaPolicy): Promise<MfaPolicy> {
  const before = await tx
    .selectFrom('platform')
    .select('mfa_for_platform_roles')
    .forUpdate()
    .executeTakeFirstOrThrow()
  await tx.updateTable('platform').set({ mfa_for_platform_roles: value }).execute()
  return before.mfa_for_platform_roles
}
