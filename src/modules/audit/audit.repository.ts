import { type Kysely, sql } from 'kysely'
import type { Database } from '../../db/schema.js'

export {
  type AuditActor,
  type AuditEvent,
  type AuditRecord,
  auditActorColumns,
  auditEvent,
  type Changes,
  changesBetween,
  MASKED,
  recordOfChange,
  toAuditEventRecord,
} from '../../outbox/audit-event.js'
export { recordAudit, writeAuditEvents } from '../../outbox/audit-trail.js'

export interface AuditFilter {
  /** Events of these tenants and every tenant below them; undefined: every event (platform). */
  subtreeOf?: string
  action?: string | undefined
  actorId?: string | undefined
  targetId?: string | undefined
  since?: Date | undefined
  until?: Date | undefined
  afterId?: string | undefined
  limit: number
}

/** Newest first, keyset-paged on (occurred, id). Reads limit+1 rows. */
export async function listAuditEvents(db: Kysely<Database>, filter: AuditFilter) {
  let query = db.selectFrom('audit_events').selectAll().orderBy('occurred', 'desc').orderBy('id', 'desc')
  if (filter.subtreeOf !== undefined) {
    const root = filter.subtreeOf
    // Said outright so that the planner may use the partial tenant index (migration 0009).
    query = query.where('tenant_id', 'is not', null)
    query = query.where((eb) =>
      eb.or([
        eb('tenant_id', '=', root),
        eb(
          'tenant_id',
          'in',
          eb.selectFrom('tenants').select('id').where(sql<boolean>`${root}::uuid = any (parent_ids)`),
        ),
      ]),
    )
  }
  if (filter.action !== undefined) {
    if (filter.action.endsWith('.*')) {
      query = query.where(sql<boolean>`starts_with(action, ${filter.action.slice(0, -1)})`)
    } else if (filter.action !== '*') query = query.where('action', '=', filter.action)
  }
  if (filter.actorId !== undefined) query = query.where('actor_id', '=', filter.actorId)
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId)
  if (filter.since !== undefined) query = query.where('occurred', '>=', filter.since)
  if (filter.until !== undefined) query = query.where('occurred', '<', filter.until)
  if (filter.afterId !== undefined) {
    query = query.where(
      sql<boolean>`(occurred, id) < (select a.occurred, a.id from audit_events a where a.id = ${filter.afterId})`,
    )
  }
  return query.limit(filter.limit + 1).execute()
}
