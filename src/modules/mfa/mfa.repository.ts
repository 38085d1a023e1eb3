import { type Kysely, sql } from 'kysely'
import type { Database } from '../../db/schema.js'

/** What second factors read across their tables and others: what an account can answer with, a session's expiry. */

/** A live session's expiry (its tokens' last moment); undefined when revoked, expired or unknown. */
export async function liveSessionExpiry(
  db: Kysely<Database>,
  userId: string,
  sessionId: string,
  now: Date,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('user_sessions')
    .select('expires_at')
    .where('id', '=', sessionId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return row?.expires_at
}

/**
 * What the account can answer a challenge with, in one read: the types of its active factors (`totp`,
 * `webauthn`), and `recovery` while an unused code remains.
 */
export async function answerKinds(db: Kysely<Database>, userId: string): Promise<string[]> {
  const { rows } = await sql<{ kind: string }>`
    select distinct type as kind from user_factors where user_id = ${userId}::uuid and status = 'active'
    union all
    select 'recovery' where exists (
      select 1 from recovery_codes where user_id = ${userId}::uuid and used_at is null)`.execute(db)
  return rows.map((row) => row.kind)
}
