import { type Kysely, sql } from 'kysely'
import type { Database } from '../../db/schema.js'

/** Recovery codes' rows (migration 0019, `recovery_codes`): keyed hashes, each spent once. */

/** Replaces the person's set: the old codes, used or not, are gone (docs/security.md, "Recovery"). */
export async function replaceRecoveryCodes(
  db: Kysely<Database>,
  userId: string,
  hashes: readonly string[],
  now: Date,
): Promise<number> {
  const deleted = await db.deleteFrom('recovery_codes').where('user_id', '=', userId).executeTakeFirst()
  await db
    .insertInto('recovery_codes')
    .values(hashes.map((code_hash) => ({ user_id: userId, code_hash, created: now })))
    .execute()
  return Number(deleted.numDeletedRows)
}

/**
 * Spends one code: a conditional UPDATE (`used_at is null`), so a code used twice — or by two requests at
 * once — is accepted once. Whether this call spent it.
 */
export async function spendRecoveryCode(
  db: Kysely<Database>,
  userId: string,
  codeHash: string,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** The person's set at a glance: when made, last used, how many are left; undefined without a set. */
export async function recoveryCodeSummary(db: Kysely<Database>, userId: string) {
  const row = await db
    .selectFrom('recovery_codes')
    .select([
      sql<Date>`min(created)`.as('created'),
      sql<Date | null>`max(used_at)`.as('last_used'),
      sql<string>`count(*) filter (where used_at is null)`.as('remaining'),
      sql<string>`count(*)`.as('total'),
    ])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  if (Number(row.total) === 0) return undefined
  return {
    created: new Date(row.created),
    lastUsed: row.last_used && new Date(row.last_used),
    remaining: Number(row.remaining),
  }
}

/** Removes the person's set (an administrator's reset, erasure, removal by the person). How many went. */
export async function deleteRecoveryCodes(db: Kysely<Database>, userId: string): Promise<number> {
  const result = await db.deleteFrom('recovery_codes').where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows)
}
