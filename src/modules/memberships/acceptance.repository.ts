import type { Kysely, Transaction } from 'kysely'
import { nextUpdated } from '../../db/row-version.js'
import type { Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/**
 * Sets the first password of a user who accepts an invitation, and the names given with it. Only a user
 * without a password gets one this way: an invitation token never replaces an existing password.
 */
export async function setInitialPassword(
  db: Executor,
  userId: string,
  passwordHash: string,
  names: { firstName?: string | undefined; lastName?: string | undefined },
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({
      password_hash: passwordHash,
      password_changed_at: now,
      ...(names.firstName !== undefined ? { first_name: names.firstName } : {}),
      ...(names.lastName !== undefined ? { last_name: names.lastName } : {}),
      updated: nextUpdated(now),
      updated_by: userId,
    })
    .where('id', '=', userId)
    .where('password_hash', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
