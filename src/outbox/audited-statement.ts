/**
 * A change and its audit event in one statement (a data-modifying WITH): one round trip and no
 * transaction, where BEGIN, insert, event, COMMIT were four (docs/performance.md, "One statement per
 * create"). The write unit places these CTEs in its statement (unit-statement.ts). Every text here is a
 * Piece (db/statement-pieces.ts), so its parameters come from the same template as its SQL.
 */
import { joinPieces, NOTHING, type Piece, param, piece, raw, value } from '../db/statement-pieces.js'
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
 * re-planning each execution (checked with pg_prepared_statements in test/audit-statement.test.ts).
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

/*
 * SCIM's create statement (modules/scim/scim-user-statement.ts) still assembles its CTEs from the two
 * builders below; once it writes through the write unit (docs/performance.md, "The write unit") they go.
 */

/** The tables whose creates write their event in the insert's own statement. */
export type AuditedTable = 'tenants' | 'users' | 'integrations'

/** One new row of an audited insert, and its event. */
export interface AuditedRow {
  row: Readonly<Record<string, unknown>>
  event: AuditEvent
  source?: Omit<EventSource, 'relation'>
}

/**
 * Which text a row needs: rows of one shape can share a statement (db/statement-batcher.ts). The text
 * depends on the columns that have a value and on the event's optional parts, never on the values.
 */
export function auditedRowShape({ row, source = {} }: AuditedRow): string {
  return [source.targetIdColumn ?? '', source.ancestorIds ? 'a' : '', ...valuedColumns(row)].join('\u0000')
}

/** The row's columns that have a value: a column whose value is undefined takes its default. */
function valuedColumns(row: AuditedRow['row']): string[] {
  return Object.keys(row).filter((column) => row[column] !== undefined)
}

/**
 * The CTEs of one new row and its event: `relation` inserts the row (answering `returning`), and the
 * event's CTEs (auditEventCtes, named with `suffix`) follow it. For a statement that writes other rows
 * with it; the row's shape (auditedRowShape) decides the text.
 */
export function auditedInsertCtes(
  table: AuditedTable,
  returning: string,
  { row, event, source = {} }: AuditedRow,
  relation: string,
  form: AuditForm,
  suffix: string,
): Piece {
  const columns = valuedColumns(row)
  const columnList = raw(columns.map((column) => `"${column}"`).join(', '))
  const values = joinPieces(columns.map((column) => value(row[column])))
  return piece`${raw(relation)} as (
    insert into ${raw(`"${table}"`)} (${columnList}) values (${values}) returning ${raw(returning)}),
    ${auditEventCtes(event, { ...source, relation }, form, suffix)}`
}
