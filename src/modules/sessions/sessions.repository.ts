import { type Kysely, sql } from 'kysely'
import type { AuthMethod, Database } from '../../db/schema.js'
import type { RevokedSession } from '../auth/session-store.repository.js'

/** Listing and ending a person's sessions (migration 0017; docs/security.md). */

/** The person's live sessions — not revoked, not expired — newest first. */
export async function listLiveSessions(db: Kysely<Database>, userId: string, now: Date) {
  return (
    db
      .selectFrom('user_sessions')
      .select(['id', 'created', 'last_seen', 'ip', 'user_agent'])
      // As text[]: node-postgres parses no array of a domain (it would answer the literal '{pwd}').
      .select(sql<AuthMethod[]>`auth_methods::text[]`.as('auth_methods'))
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created', 'desc')
      .orderBy('id', 'desc')
      .execute()
  )
}

/** Which of a person's live sessions to end: one, every one but one, or all. */
export type SessionChoice = { only: string } | { except: string | undefined }

/**
 * Ends the chosen live sessions of a person, stamped with the database's clock like every revocation
 * (migration 0017); answers those it ended, with when their tokens expire anyway.
 */
export async function revokeSessions(
  db: Kysely<Database>,
  userId: string,
  choice: SessionChoice,
  now: Date,
): Promise<RevokedSession[]> {
  let query = db
    .updateTable('user_sessions')
    .set({ revoked_at: sql<Date>`statement_timestamp()` })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
  if ('only' in choice) query = query.where('id', '=', choice.only)
  else if (choice.except !== undefined) query = query.where('id', '!=', choice.except)
  const rows = await query.returning(['id', 'expires_at']).execute()
  return rows.map((row) => [row.id, row.expires_at.getTime()])
}
