import type { Kysely } from 'kysely'
import type { Database } from '../../db/schema.js'

/** What second factors read of other tables: the person's password change, a session's expiry. */

/**
 * Whether the person's password changed after `since` (a sign-in challenge issued before a change must
 * not earn a session: docs/security.md, "Recovery"); a person gone or unable to sign in counts as changed.
 */
export async function signInLapsedSince(db: Kysely<Database>, userId: string, since: Date): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select(['password_changed_at', 'status'])
    .where('id', '=', userId)
    .executeTakeFirst()
  if (!row || row.status === 'disabled' || row.status === 'erased') return true
  return row.password_changed_at !== null && row.password_changed_at > since
}

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
