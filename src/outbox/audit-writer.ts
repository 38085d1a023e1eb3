/**
 * The audit trail's writer (API.md §13), in the outbox layer because an event and its webhook deliveries
 * are written together and the worker writes events too (webhook.disabled, invitation.expired). Features
 * import it through modules/audit/audit.repository.ts.
 */
import {
  type CompiledQuery,
  type Kysely,
  type QueryResult,
  type RawBuilder,
  type Selectable,
  sql,
} from 'kysely'
import type { Actor } from '../access/actor.js'
import type { Clock } from '../clock.js'
import { newId } from '../crypto/uuid7.js'
import type { AuditActorType, AuditEventsTable, Database } from '../db/schema.js'
import { copyName, copySuffix } from '../db/statement-batcher.js'
import { statementTexts } from '../db/statement-texts.js'
import { currentRequest } from '../http/request-context.js'
import { WEBHOOK_KIND } from './outbox.repository.js'

/** What a secret or password looks like in an event's changes (API.md §13). */
export const MASKED = '********'

/** field → [before, after]. */
export type Changes = Record<string, [unknown, unknown]>

/** Who did it: a user, an API key, or the service itself (expiry sweeps, bootstrap). */
export type AuditActor = Actor | { kind: 'system' }

export interface AuditRecord {
  /** `<target>.<verb>`, e.g. `tenant.created`, `membership.status_changed`. */
  action: string
  tenantId: string | null
  target: { type: string; id: string | null }
  changes?: Changes
}

/**
 * An event's actor columns; also for the one statement that writes its events itself (a bulk load's
 * users and their user.created events, bulk.repository.ts).
 */
export function auditActorColumns(actor: AuditActor): { type: AuditActorType; id: string | null } {
  if (actor.kind === 'user') return { type: 'user', id: actor.userId }
  if (actor.kind === 'api_key') return { type: 'apiKey', id: actor.keyId }
  return { type: 'system', id: null }
}

/** One event's column values: the one builder of an audit row, whichever statement writes it. */
export interface AuditEvent {
  id: string
  occurred: string
  actorType: AuditActorType
  actorId: string | null
  action: string
  tenantId: string | null
  targetType: string
  targetId: string | null
  changes: string
  requestId: string | null
  ip: string | null
}

/**
 * An event of `actor`, now: the request id and address come from the request being served
 * (http/request-context.ts); outside a request they are null.
 */
export function auditEvent(clock: Clock, actor: AuditActor, record: AuditRecord): AuditEvent {
  const who = auditActorColumns(actor)
  const request = currentRequest()
  return {
    id: newId(),
    occurred: clock.now().toISOString(),
    actorType: who.type,
    actorId: who.id,
    action: record.action,
    tenantId: record.tenantId,
    targetType: record.target.type,
    targetId: record.target.id,
    changes: JSON.stringify(record.changes ?? {}),
    requestId: request?.requestId ?? null,
    ip: request?.ip ?? null,
  }
}

const EVENT_COLUMNS = sql.raw(
  'id, occurred, actor_type, actor_id, action, tenant_id, target_type, target_id, changes, request_id, ip',
)

/**
 * The webhook fan-out of the events in `events` (a relation with id, occurred, action, tenant_id and
 * ancestor_ids, the tenant's ancestors): one `webhook` outbox row per event and matching active endpoint —
 * the event's tenant's, or an ancestor's with includeSubTenants; patterns "*", "membership.*" or an exact
 * action. The outbox row's id is the Standard Webhooks `webhook-id`; its ordering key (the endpoint) keeps
 * deliveries in order.
 */
function webhookFanOut(events: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    insert into outbox (id, tenant_id, kind, payload, next_attempt_at, created, ordering_key)
    select gen_random_uuid(), w.tenant_id, ${WEBHOOK_KIND},
           jsonb_build_object('webhookId', w.id, 'eventId', e.id, 'action', e.action),
           e.occurred, e.occurred, w.id
    from ${events} as e
    join webhooks w on w.active
      and (w.tenant_id = e.tenant_id or (w.include_sub_tenants and w.tenant_id = any (e.ancestor_ids)))
    where exists (
      select 1 from unnest(w.events) as p(pattern)
      where p.pattern = '*' or p.pattern = e.action
        or (right(p.pattern, 2) = '.*' and starts_with(e.action, left(p.pattern, -1)))
    )
    order by e.id, w.id`
}

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
 * How a statement writes its event: `fan-out` queues the webhook deliveries in the same statement;
 * `guarded` leaves them out and is refused (nothing written) while any endpoint is active.
 */
export type AuditForm = 'fan-out' | 'guarded'

/**
 * The CTEs that write an event together with the change of the statement they join: `audit_event`,
 * written exactly when the change's relation has a row, and — in the `fan-out` form — `webhook_delivery`,
 * its fan-out. For a statement that already is a WITH (an invitation); a new row uses auditedInserts. Run
 * the statement with executeAudited, which picks the form.
 *
 * Every value is a scalar parameter, so PostgreSQL keeps one generic plan per statement text instead of
 * re-planning each execution (checked with pg_prepared_statements in test/audit-statement.test.ts).
 * `suffix` names the CTEs of one copy of a write in a statement that holds several (db/statement-batcher.ts).
 */
export function auditEventCtes(
  event: AuditEvent,
  source: EventSource,
  form: AuditForm,
  suffix = '',
): RawBuilder<unknown> {
  const relation = sql.raw(source.relation)
  const auditEvent = sql.raw(`audit_event${suffix}`)
  const targetId = source.targetIdColumn
    ? sql`source.${sql.ref(source.targetIdColumn)}`
    : sql`${event.targetId}::uuid`
  const insertEvent = sql`
    ${auditEvent} as (
      insert into audit_events (${EVENT_COLUMNS})
      select ${event.id}::uuid, ${event.occurred}::timestamptz, ${event.actorType}::text, ${event.actorId}::uuid,
             ${event.action}::text, ${event.tenantId}::uuid, ${event.targetType}::text, ${targetId},
             ${event.changes}::jsonb, ${event.requestId}::text, ${event.ip}::text
      from (select * from ${relation} limit 1) as source
      ${form === 'guarded' ? sql`where tenantry_no_active_webhook()` : sql``}
      returning id, occurred, action, tenant_id)`
  if (form === 'guarded') return insertEvent
  const ancestors = source.ancestorIds
    ? sql`${source.ancestorIds}::uuid[]`
    : sql`(select t.parent_ids from tenants t where t.id = ${auditEvent}.tenant_id)`
  return sql`${insertEvent},
    ${sql.raw(`webhook_delivery${suffix}`)} as (${webhookFanOut(sql`(select ${auditEvent}.*, ${ancestors} as ancestor_ids from ${auditEvent})`)})`
}

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

/** The row's columns that have a value: Kysely leaves out the columns whose value is undefined. */
function valuedColumns(row: AuditedRow['row']): string[] {
  return Object.keys(row).filter((column) => row[column] !== undefined)
}

/**
 * New rows and their audit events in one statement (a data-modifying WITH): one round trip and no
 * transaction, where BEGIN, insert, event, COMMIT were four (docs/performance.md). Every row must have
 * the first one's shape (auditedRowShape). With one row the statement answers the inserted row's
 * `returning` columns; with several, each copy of the insert and its event has CTEs of its own
 * (`change`, `change_1` … as copySuffix names them) and the answer adds `copy`, the row's place. Run it
 * with executeAudited.
 *
 * Its text depends only on the table, the shape, the number of rows and the form, so it is built once per
 * shape and reused (db/statement-texts.ts): per row, its values in column order, then its event's
 * (auditParameters).
 */
export function auditedInserts<Row>(
  db: Kysely<Database>,
  table: AuditedTable,
  returning: 'id' | '*',
  rows: readonly AuditedRow[],
): (form: AuditForm) => CompiledQuery<Row & { copy?: number }> {
  return (form) => {
    const first = rows[0]
    if (!first) throw new Error('auditedInserts needs a row')
    const shape = auditedRowShape(first)
    const columns = valuedColumns(first.row)
    const parameters = rows.flatMap(({ row, event, source = {} }) => [
      ...columns.map((column) => row[column]),
      ...auditParameters(event, source, form),
    ])
    const key = `${INSERT_SHAPE}${table}\u0000${rows.length}\u0000${returning}\u0000${form}\u0000${shape}`
    return statementTexts.compile<Row & { copy?: number }>(key, parameters, () => {
      const copies = rows.map(({ row, event, source = {} }, k) => {
        const insert = db.insertInto(table).values(row as never)
        const change = returning === '*' ? insert.returningAll() : insert.returning('id')
        const relation = copyName('change', k)
        return sql`${sql.raw(relation)} as (${change}),
        ${auditEventCtes(event, { ...source, relation }, form, copySuffix(k))}`
      })
      const answers =
        rows.length === 1
          ? sql`select * from change`
          : sql.join(
              rows.map(
                (_, k) => sql`select ${sql.lit(k)}::int as copy, * from ${sql.raw(copyName('change', k))}`,
              ),
              sql` union all `,
            )
      return sql<Row & { copy?: number }>`with ${sql.join(copies)} ${answers}`.compile(db)
    })
  }
}

/**
 * Runs auditedInserts' statement (executeAudited) and answers each row's `returning` columns, in the
 * rows' order. The statement is one transaction: every row is written, or none.
 */
export async function executeAuditedInserts<Row>(
  db: Kysely<Database>,
  table: AuditedTable,
  returning: 'id' | '*',
  rows: readonly AuditedRow[],
): Promise<Row[]> {
  const { rows: answered } = await executeAudited(db, auditedInserts<Row>(db, table, returning, rows))
  if (rows.length === 1) return answered as Row[]
  const byCopy = new Map(answered.map(({ copy, ...row }) => [copy, row as Row]))
  return rows.map((_, k) => {
    const row = byCopy.get(k)
    if (!row) throw new Error(`INSERT … RETURNING gave no row for copy ${k}`)
    return row
  })
}

/** The prefix of auditedInserts' shapes among the reused statement texts. */
const INSERT_SHAPE = 'audited insert\u0000'

/** Whether a shape's text is reused (for the test that holds every create path to it). */
export function isReusedInsertShape(table: AuditedTable, copies: 'one' | 'several' = 'one'): boolean {
  return statementTexts.reuses(`${INSERT_SHAPE}${table}\u0000`, (rest) => {
    const count = Number(rest.slice(0, rest.indexOf('\u0000')))
    return copies === 'one' ? count === 1 : count > 1
  })
}

/** The event's parameters in the order auditEventCtes places them. */
export function auditParameters(
  event: AuditEvent,
  source: Omit<EventSource, 'relation'>,
  form: AuditForm,
): unknown[] {
  const parameters: unknown[] = [
    event.id,
    event.occurred,
    event.actorType,
    event.actorId,
    event.action,
    event.tenantId,
    event.targetType,
    ...(source.targetIdColumn ? [] : [event.targetId]),
    event.changes,
    event.requestId,
    event.ip,
  ]
  if (form === 'fan-out') parameters.push(WEBHOOK_KIND, ...(source.ancestorIds ? [source.ancestorIds] : []))
  return parameters
}

/** SQLSTATE of tenantry_no_active_webhook (migration 0010). */
const ACTIVE_WEBHOOK = 'TW001'
/** How long a process writes the fan-out form after it met an active endpoint, before trying again. */
const FAN_OUT_FOR_MS = 60_000

/**
 * When this process last met an active webhook endpoint. Only a hint for choosing the form of the next
 * statement: the guarded form is refused while any endpoint is active, and the fan-out form is right
 * either way, so a stale value costs time, never an event. Hence module-level, not on the context.
 */
let metActiveWebhookAt = Number.NEGATIVE_INFINITY

/**
 * Runs a statement that writes an audit event (auditedInserts, or one built with auditEventCtes). While
 * no webhook endpoint is active — the usual case — it runs the `guarded` form, without the fan-out; when
 * the guard meets an active endpoint the statement wrote nothing, and it runs again in the `fan-out`
 * form, which this process then keeps for a minute. In a transaction a refused statement would abort the
 * transaction, so there it runs the fan-out form at once.
 */
export async function executeAudited<Row>(
  db: Kysely<Database>,
  statement: (form: AuditForm) => CompiledQuery<Row>,
): Promise<QueryResult<Row>> {
  const fanOutNow = db.isTransaction || Date.now() - metActiveWebhookAt < FAN_OUT_FOR_MS
  if (!fanOutNow) {
    try {
      return await db.executeQuery(statement('guarded'))
    } catch (error) {
      if ((error as { code?: unknown }).code !== ACTIVE_WEBHOOK) throw error
      metActiveWebhookAt = Date.now()
    }
  }
  return db.executeQuery(statement('fan-out'))
}

/**
 * Writes audit events with the executor the change itself runs on — the transaction of the change — so
 * an event exists exactly when its change committed. For paths whose change is several statements (or
 * several events); a create writes its event in its own statement (auditedInserts).
 *
 * One insert, whatever the number of events (unnest); then, when any endpoint is active, the webhook
 * fan-out.
 */
export async function recordAudit(
  db: Kysely<Database>,
  clock: Clock,
  actor: AuditActor,
  records: AuditRecord | AuditRecord[],
): Promise<void> {
  const list = Array.isArray(records) ? records : [records]
  await writeAuditEvents(
    db,
    list.map((record) => auditEvent(clock, actor, record)),
  )
}

/** Events built beforehand (auditEvent), in their order, with the change's executor: see recordAudit. */
export async function writeAuditEvents(db: Kysely<Database>, events: readonly AuditEvent[]): Promise<void> {
  if (events.length === 0) return
  const column = <K extends keyof AuditEvent>(key: K) => events.map((e) => e[key])
  // Two plain statements rather than one with a data-modifying WITH: with its array parameters PostgreSQL
  // re-planned that one on every execution (~0.45 ms of database CPU per write, measured with EXPLAIN
  // ANALYZE on a prepared statement), while the plain insert keeps a generic plan. The insert also says
  // whether any webhook endpoint is active, so the fan-out costs no round trip while none is; the same
  // transaction checks it, so no process misses a new endpoint.
  const inserted = await sql<{ fanOut: boolean }>`
    insert into audit_events (${EVENT_COLUMNS})
    select * from unnest(
      ${column('id')}::uuid[], ${column('occurred')}::timestamptz[], ${column('actorType')}::text[],
      ${column('actorId')}::uuid[], ${column('action')}::text[], ${column('tenantId')}::uuid[],
      ${column('targetType')}::text[], ${column('targetId')}::uuid[], ${column('changes')}::jsonb[],
      ${column('requestId')}::text[], ${column('ip')}::text[]
    )
    returning exists (select 1 from webhooks where active) as "fanOut"
  `.execute(db)
  if (!inserted.rows[0]?.fanOut) return
  await webhookFanOut(sql`(
    select e.id, e.occurred, e.action, e.tenant_id, t.parent_ids as ancestor_ids
    from audit_events e join tenants t on t.id = e.tenant_id
    where e.id = any (${column('id')}::uuid[]))`).execute(db)
}

/**
 * The fields that differ between two versions of a record, as [before, after]; `secrets` are masked on
 * both sides (a change shows that it happened, never the value).
 */
export function changesBetween<T extends Record<string, unknown>>(
  before: Partial<T> | undefined,
  after: Partial<T>,
  fields: readonly (keyof T & string)[],
  secrets: readonly string[] = [],
): Changes {
  const changes: Changes = {}
  for (const field of fields) {
    const old = before?.[field]
    const now = after[field]
    if (now === undefined || sameValue(old, now)) continue
    changes[field] = secrets.includes(field)
      ? [old === undefined || old === null || old === '' ? old : MASKED, MASKED]
      : [old ?? null, now]
  }
  return changes
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime()
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b)
  return a === b
}

/** An event as the API and webhook bodies show it (API.md §13). */
export function toAuditEventRecord(row: Selectable<AuditEventsTable>) {
  return {
    id: row.id,
    occurred: row.occurred.toISOString(),
    actor: { type: row.actor_type, id: row.actor_id },
    action: row.action,
    tenantId: row.tenant_id,
    target: { type: row.target_type, id: row.target_id },
    changes: row.changes,
    requestId: row.request_id,
    ip: row.ip,
  }
}
