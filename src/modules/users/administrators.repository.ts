import { type Kysely, sql, type Transaction } from 'kysely'
import { ROLE_IDS } from '../../access/permissions.js'
import type { Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/** The statuses that cannot sign in (authenticator.ts): a user in any other one is enabled to act. */
export const SIGNED_OUT_STATUSES = ['disabled', 'erased'] as const

/**
 * How many Platform Administrators who can sign in there are besides `exceptUserId`. Every such
 * administrator — `exceptUserId` too — is locked until the transaction ends, always in id order: two
 * requests that would each take one of the last two administrators away queue on the same rows, and the
 * second then counts without the row the first changed (PostgreSQL re-checks a locked row's condition
 * once it is free), so at least one remains, and neither waits for the other in a cycle.
 */
export async function lockAdministratorsBesides(tx: Executor, exceptUserId: string): Promise<number> {
  const admin = ROLE_IDS.platformAdministrator
  const rows = await tx
    .selectFrom('users')
    .select('id')
    .where('status', 'not in', SIGNED_OUT_STATUSES)
    .where((eb) =>
      eb.or([eb('role_id', '=', admin), sql<boolean>`${admin}::uuid = any(additional_role_ids)`]),
    )
    .orderBy('id')
    .forUpdate()
    .execute()
  return rows.filter((row) => row.id !== exceptUserId).length
}
