import type { Insertable, Kysely, Updateable } from 'kysely'
import type { Database, SsoTestRow, SsoTestsTable } from '../../db/schema.js'

/** SQL of test sign-ins (sso_tests, migration 0015). Every tenant-scoped read takes the tenant id. */

export async function insertSsoTest(db: Kysely<Database>, row: Insertable<SsoTestsTable>): Promise<void> {
  await db.insertInto('sso_tests').values(row).execute()
}

export async function findSsoTest(
  db: Kysely<Database>,
  where: { tenantId: string; providerId: string; id: string },
  now: Date,
): Promise<SsoTestRow | undefined> {
  return db
    .selectFrom('sso_tests')
    .selectAll()
    .where('tenant_id', '=', where.tenantId)
    .where('provider_id', '=', where.providerId)
    .where('id', '=', where.id)
    .where('expires', '>', now)
    .executeTakeFirst()
}

/**
 * Marks a pending test started, once: a test is one sign-in, so its start link works for the first
 * browser only, and only while it is fresh (created after `createdAfter`).
 */
export async function markSsoTestStarted(
  db: Kysely<Database>,
  where: { providerId: string; id: string },
  now: Date,
  createdAfter: Date,
): Promise<SsoTestRow | undefined> {
  return db
    .updateTable('sso_tests')
    .set({ status: 'started', started: now })
    .where('provider_id', '=', where.providerId)
    .where('id', '=', where.id)
    .where('status', '=', 'pending')
    .where('created', '>', createdAfter)
    .returningAll()
    .executeTakeFirst()
}

/** Records a started test's result; undefined when it was not waiting for one. */
export async function completeSsoTest(
  db: Kysely<Database>,
  id: string,
  result: Updateable<SsoTestsTable>,
): Promise<SsoTestRow | undefined> {
  return db
    .updateTable('sso_tests')
    .set(result)
    .where('id', '=', id)
    .where('status', '=', 'started')
    .returningAll()
    .executeTakeFirst()
}
