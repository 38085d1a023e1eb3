import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/schema.js'

/** The ids of every audit event so far: the events a request writes next are told apart by them. */
export async function eventIdsSoFar(db: Kysely<Database>): Promise<Set<string>> {
  const rows = await db.selectFrom('audit_events').select('id').execute()
  return new Set(rows.map((row) => row.id))
}

/** The events (action and changes) of one record written since `earlier`, oldest first. */
export async function eventsSince(
  db: Kysely<Database>,
  earlier: Set<string>,
  targetType: string,
  targetId: string,
) {
  const rows = await db
    .selectFrom('audit_events')
    .select(['id', 'action', 'changes'])
    .where('target_type', '=', targetType)
    .where('target_id', '=', targetId)
    .orderBy('id')
    .execute()
  return rows.filter((row) => !earlier.has(row.id)).map(({ action, changes }) => ({ action, changes }))
}
