import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'
import { PASSWORD_RESET_EMAIL } from './outbox.repository.js'

/** The outbox rows of password-reset mail (docs/api.md, password reset): what a newer link replaces. */

type Executor = Kysely<Database> | Transaction<Database>

/**
 * Deletes a user's not-yet-sent password-reset mail: a newer link (or a password set meanwhile) has made
 * its link dead, so it must not go out.
 */
export async function deleteQueuedPasswordResetMail(db: Executor, userId: string): Promise<void> {
  await db
    .deleteFrom('outbox')
    .where('kind', '=', PASSWORD_RESET_EMAIL)
    .where('status', '=', 'queued')
    .where(sql<boolean>`payload->>'userId' = ${userId}`)
    .execute()
}

/** The delivery state of a user's latest password-reset mail (queued, sent, failed), if any. */
export async function latestPasswordResetMailStatus(
  db: Executor,
  userId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('outbox')
    .select('status')
    .where('kind', '=', PASSWORD_RESET_EMAIL)
    .where(sql<boolean>`payload->>'userId' = ${userId}`)
    .orderBy('created', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row?.status
}
