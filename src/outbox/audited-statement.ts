/**
 * A change and its audit event in one statement (a data-modifying WITH): one round trip and no
 * transaction, where BEGIN, insert, event, COMMIT were four (docs/performance.md, "One statement per
 * create"). The write unit places these CTEs in its statement (unit-statement.ts). Every text here is a
 * Piece (db/statement-pieces.ts), so its parameters come from the same template as its SQL.
 */
import { joinPieces, NOTHING, type Piece, param, piece, raw } from '../db/statement-pieces.js'
import { type AuditEvent, EVENT_COLUMN_LIST, EVENT_COLUMNS } from './audit-event.js'
import { type AuditForm, webhookFanOut } from './webhook-fan-out.js'

export interface EventSource {
  /** The relation of the statement whose rows the event follows (a CTE with RETURNING). */
  relation: string
  /** A column of that relation that is the event's target id, when only the statement knows it. */
  targetIdColumn?: string
  /**
   * The ancestors of the event's tenant when that tenant is the row the statement inserts (a new tenant,
   * which the statement's own snapshot cannot see); otherwise they are read from tenants.
   */
  ancestorIds?: readonly string[]
}

/**
 * The CTEs that write an event together with the change of the statement they join: `audit_event`,
 * written exactly when the change's relation has a row, and — in the `fan-out` form — `webhook_delivery`,
 * its fan-out. Run the statement with executeAudited (webhook-fan-out.ts), which picks the form.
 *
 * Every value is a scalar parameter, so PostgreSQL keeps one generic plan per statement text instead of
 * re-planning each execution (checked with pg_prepared_statements in test/outbox/audit-statement.test.ts).
 * `suffix` names the CTEs of one copy of a write in a statement that holds several (db/statement-batcher.ts).
 */
export function auditEventCtes(event: AuditEvent, source: EventSource, form: AuditForm, suffix = ''): Piece {
  const auditEvent = raw(`audit_event${suffix}`)
  const values = EVENT_COLUMNS.map(([column, type, field]) =>
    column === 'target_id' && source.targetIdColumn
      ? raw(`source.${source.targetIdColumn}`)
      : param(event[field], type),
  )
  const insertEvent = piece`
    ${auditEvent} as (
      insert into audit_events (${raw(EVENT_COLUMN_LIST)})
      select ${joinPieces(values)}
      from (select * from ${raw(source.relation)} limit 1) as source
      ${form === 'guarded' ? raw('where tenantry_no_active_webhook()') : NOTHING}
      returning id, occurred, action, tenant_id)`
  if (form === 'guarded') return insertEvent
  const ancestors = source.ancestorIds
    ? param(source.ancestorIds, 'uuid[]')
    : piece`(select t.parent_ids from tenants t where t.id = ${auditEvent}.tenant_id)`
  const events = piece`(select ${auditEvent}.*, ${ancestors} as ancestor_ids from ${auditEvent})`
  return piece`${insertEvent},
    ${raw(`webhook_delivery${suffix}`)} as (${webhookFanOut(events)})`
}
