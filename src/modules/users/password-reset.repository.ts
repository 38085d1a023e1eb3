import type { Kysely, Transaction } from 'kysely'
import { nextUpdated } from '../../db/row-version.js'
import type { Database, UserRow } from '../../db/schema.js'
import { ifMatchChecked } from '../../http/request-context.js'

/** SQL of the password-reset link (migration 0004): its token hash and expiry live on the user row. */

type Executor = Kysely<Database> | Transaction<Database>

/** Stores a new live link, replacing any older one (whose token stops working at once). */
export async function storeResetToken(
  db: Executor,
  userId: string,
  tokenHash: string,
  expiresAt: Date,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ reset_password_token_hash: tokenHash, reset_password_expiry_date: expiresAt })
    .where('id', '=', userId)
    .execute()
}

export async function findUserByResetTokenHash(
  db: Executor,
  tokenHash: string,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('reset_password_token_hash', '=', tokenHash)
    .executeTakeFirst()
}

/**
 * Sets the password chosen through the link and spends the link, only while the link is still the live
 * one: a token works once, even under two concurrent uses. The new password ends every session of the
 * user (migration 0017's trigger, docs/security.md). Through `PUT /v1/users/{id}`, its If-Match is
 * checked in the same statement ('stale').
 */
export async function setPasswordWithResetToken(
  db: Executor,
  userId: string,
  tokenHash: string,
  passwordHash: string,
  now: Date,
): Promise<UserRow | 'stale' | undefined> {
  const { query, outcome } = ifMatchChecked(
    'users',
    db
      .updateTable('users')
      .set({
        password_hash: passwordHash,
        password_changed_at: now,
        reset_password_token_hash: null,
        reset_password_expiry_date: null,
        updated: nextUpdated(now),
        updated_by: userId,
      })
      .where('id', '=', userId)
      .where('reset_password_token_hash', '=', tokenHash),
  )
  const row = await query.returningAll().executeTakeFirst()
  return outcome(row)
}
