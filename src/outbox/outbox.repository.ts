import { type Kysely, sql, type Transaction } from 'kysely'
import { PLANNED_EACH_RUN } from '../db/prepared-pool.js'
import type { Database, OutboxRow } from '../db/schema.js'
import { joinPieces, type Piece, param, piece, raw } from '../db/statement-pieces.js'

/**
 * SQL for the mail outbox (docs/api.md#the-invitation-e-mail). Rows are written inside the transaction of the change that causes
 * them and claimed by any number of workers with FOR UPDATE SKIP LOCKED, so that each row is handed to
 * one worker at a time and nothing is lost when a worker dies (its lease runs out and another takes it).
 */

type Executor = Kysely<Database> | Transaction<Database>

export const INVITATION_EMAIL = 'invitation_email'
export const PASSWORD_RESET_EMAIL = 'password_reset_email'
/** A notice that an administrator reset a person's second factors (mail/factor-reset-mail.ts). */
export const FACTOR_RESET_EMAIL = 'factor_reset_email'
/** A webhook delivery (payload: webhookId, eventId, action); ordering_key is the webhook's id. */
export const WEBHOOK_KIND = 'webhook'

export interface NewOutboxRow {
  id: string
  tenantId: string | null
  kind: string
  payload: Record<string, unknown>
  now: Date
  /**
   * Set when this process's worker takes the row from its writer (OutboxSignal.lease): the row is
   * written already claimed — its first attempt counted, leased until then — so no claim statement is
   * needed for it, and other workers leave it alone unless the lease runs out (the process died).
   */
  lease?: Date
}

/** A row written leased to this process's worker, as it is handed over: its id and its lease. */
export interface LeasedRow {
  id: string
  lease: Date
}

/**
 * The one column list of a new outbox row, with each column's SQL type. Every insert into outbox names
 * these (insertOutboxRows, insertOutboxRowFrom); the other columns take their defaults: queued.
 */
const NEW_ROW_TYPES = {
  id: 'uuid',
  tenant_id: 'uuid',
  kind: 'text',
  payload: 'jsonb',
  next_attempt_at: 'timestamptz',
  created: 'timestamptz',
  attempts: 'integer',
  locked_until: 'timestamptz',
} as const
type NewRowColumn = keyof typeof NEW_ROW_TYPES
const NEW_ROW_COLUMNS = Object.keys(NEW_ROW_TYPES) as NewRowColumn[]
const COLUMN_LIST = sql.raw(NEW_ROW_COLUMNS.join(', '))
const typeOf = (column: NewRowColumn) => sql.raw(NEW_ROW_TYPES[column])

/**
 * The one builder of a new row's values: due at once; with a lease, claimed by its first attempt and due
 * when the lease runs out — the moment a claim could take it anyway. So the claim's walk of the due index
 * (next_attempt_at <= now) stops before the rows handed over and not sent yet, instead of reading each
 * one to find it leased.
 */
function outboxValues(row: NewOutboxRow): Record<NewRowColumn, string | null> {
  const now = row.now.toISOString()
  const lease = row.lease?.toISOString() ?? null
  return {
    id: row.id,
    tenant_id: row.tenantId,
    kind: row.kind,
    payload: JSON.stringify(row.payload),
    next_attempt_at: lease ?? now,
    created: now,
    attempts: row.lease ? '1' : '0',
    locked_until: lease,
  }
}

/**
 * Deletes the not-yet-sent invitation mail of one membership: its link is about to die (resent,
 * cancelled, accepted), so it must not go out, and its encrypted token goes with it. A row a worker is
 * sending at this very moment may still arrive; its link then answers "no longer valid".
 */
export async function deleteQueuedInvitationMail(
  db: Executor,
  tenantId: string,
  userId: string,
): Promise<void> {
  await db
    .deleteFrom('outbox')
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', INVITATION_EMAIL)
    .where('status', '=', 'queued')
    .where(sql<boolean>`payload->>'userId' = ${userId}`)
    .execute()
}

/**
 * Claims up to `limit` due rows for one worker — queued, due, and not leased (or their lease has run
 * out), oldest first, found through the due index — leasing them until `lockUntil` in one short
 * statement (its own transaction) that locks them with SKIP LOCKED: rows another worker is claiming are
 * skipped, not waited for. The attempt is counted at claim time, so a worker that dies mid-send still
 * uses up an attempt. Planned each run (PLANNED_EACH_RUN): a plan kept from a small outbox scans it all.
 */
export async function claimDueRows(
  db: Executor,
  now: Date,
  lockUntil: Date,
  limit: number,
): Promise<OutboxRow[]> {
  return claimDueRowsQuery(db, now, lockUntil, limit).execute()
}

/** The statement behind claimDueRows (exported for the test that reads its plan). */
export function claimDueRowsQuery(db: Executor, now: Date, lockUntil: Date, limit: number) {
  return db
    .updateTable('outbox')
    .set({ locked_until: lockUntil, attempts: sql`attempts + 1` })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('outbox')
        .select('id')
        .where('status', '=', 'queued')
        .where('next_attempt_at', '<=', now)
        .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', now)]))
        // Rows sharing an ordering key (a webhook endpoint) go one at a time, oldest first: a row waits
        // while an earlier one of its key is still queued (being sent, or waiting for its retry).
        .where(
          sql<boolean>`(ordering_key is null or not exists (
            select 1 from outbox earlier
            where earlier.ordering_key = outbox.ordering_key and earlier.status = 'queued'
              and earlier.seq < outbox.seq))`,
        )
        .orderBy('next_attempt_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .modifyEnd(PLANNED_EACH_RUN)
}

/**
 * The rows written already leased to this process's worker (NewOutboxRow.lease) that are still its to
 * send: queued, and holding the very lease they were written with. A row deleted meanwhile (its
 * invitation resent, cancelled or accepted) or claimed by another worker after the lease ran out is not
 * returned. A read by primary key, where a claim would write every row once more.
 */
export async function leasedRows(db: Executor, handedOver: readonly LeasedRow[]): Promise<OutboxRow[]> {
  if (handedOver.length === 0) return []
  const leases = new Map(handedOver.map((row) => [row.id, row.lease.getTime()]))
  const rows = await leasedRowsQuery(db, [...leases.keys()]).execute()
  return rows.filter((row) => row.status === 'queued' && row.locked_until?.getTime() === leases.get(row.id))
}

/**
 * The read behind leasedRows: by primary key alone. The status is checked on the rows read, not in the
 * statement: with `status = 'queued'` in it, PostgreSQL plans each execution afresh and ANDs the primary
 * key with the due index, whose entries it then reads all of — every queued row, and every row sent since
 * the last vacuum (docs/performance.md: 390,000 → 114,000 instructions a mail, read and mark).
 */
export function leasedRowsQuery(db: Executor, ids: readonly string[]) {
  return db
    .selectFrom('outbox')
    .selectAll()
    .where(sql<boolean>`id = any (${ids}::uuid[])`)
    .modifyEnd(PLANNED_EACH_RUN)
}

/**
 * Gives back leases written with rows (NewOutboxRow.lease) that their worker will not send (it stops):
 * the rows become due for any worker at once, their unused attempt given back. A row that no longer
 * holds the lease it was written with (another worker claimed it since) is left alone.
 */
export async function releaseLeases(db: Executor, handedOver: readonly LeasedRow[]): Promise<void> {
  if (handedOver.length === 0) return
  const ids = handedOver.map((row) => row.id)
  const leases = handedOver.map((row) => row.lease.toISOString())
  await db
    .updateTable('outbox')
    // Due since it was written (outboxValues made it due when its lease runs out).
    .set({ locked_until: null, attempts: sql`attempts - 1`, next_attempt_at: sql`created` })
    .where(
      sql<boolean>`(id, locked_until) in (select * from unnest(${ids}::uuid[], ${leases}::timestamptz[]))`,
    )
    .where('status', '=', 'queued')
    .execute()
}

/** Marks rows delivered and drops their secret envelopes: a sent mail's token is kept nowhere. */
export async function markSent(db: Executor, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return
  await db
    .updateTable('outbox')
    .set({
      status: 'sent',
      sent_at: now,
      locked_until: null,
      last_error: null,
      payload: sql`payload - 'envelope'`,
    })
    // One array parameter: one statement text whatever the batch's size, planned each run.
    .where(sql<boolean>`id = any (${ids}::uuid[])`)
    .modifyEnd(PLANNED_EACH_RUN)
    .execute()
}

/** Releases a row for another attempt at `nextAttemptAt`. */
export async function markRetry(db: Executor, id: string, error: string, nextAttemptAt: Date): Promise<void> {
  await db
    .updateTable('outbox')
    .set({ locked_until: null, last_error: error, next_attempt_at: nextAttemptAt })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .execute()
}

/** Gives up on a row; its secret envelope is dropped, since nobody will send it. */
export async function markFailed(db: Executor, id: string, error: string): Promise<void> {
  await db
    .updateTable('outbox')
    .set({ status: 'failed', locked_until: null, last_error: error, payload: sql`payload - 'envelope'` })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .execute()
}

/**
 * Many new outbox rows in one statement (the invitation e-mails of a bulk load's batch, a re-issued
 * invitation's mail): each column one array parameter, zipped back into rows by unnest — one statement
 * text whatever the number of rows.
 */
export async function insertOutboxRows(db: Executor, rows: readonly NewOutboxRow[]): Promise<void> {
  if (rows.length === 0) return
  const values = rows.map(outboxValues)
  const arrays = NEW_ROW_COLUMNS.map((c) => sql`${values.map((v) => v[c])}::${typeOf(c)}[]`)
  await sql`
    insert into outbox (${COLUMN_LIST})
    select ${COLUMN_LIST} from unnest(${sql.join(arrays)}) as incoming(${COLUMN_LIST})
  `.execute(db)
}

/**
 * Writes `row` already leased to its caller for `leaseMs`, who sends it at once (send-now.ts), and
 * answers it as stored: no worker takes it unless the caller dies and the lease runs out.
 */
export async function insertLeasedToCaller(
  db: Executor,
  row: NewOutboxRow,
  leaseMs: number,
): Promise<OutboxRow> {
  const lease = new Date(row.now.getTime() + leaseMs)
  await insertOutboxRows(db, [{ ...row, lease }])
  const [leased] = await leasedRows(db, [{ id: row.id, lease }])
  if (!leased) throw new Error('an outbox row was written but is not leased to its caller')
  return leased
}

/**
 * One new row as `insert into outbox … select … from <source>`, for a statement that writes it together
 * with the change causing it (a data-modifying WITH): `payloadAddition`, a jsonb expression over the
 * source, is merged into the payload (the id of the membership the same statement inserts). No row is
 * written when the source is empty.
 */
export function insertOutboxRowFrom(row: NewOutboxRow, source: string, payloadAddition: Piece): Piece {
  const values = outboxValues(row)
  const columns = NEW_ROW_COLUMNS.map((c) =>
    c === 'payload'
      ? piece`${param(values.payload, 'jsonb')} || ${payloadAddition}`
      : param(values[c], NEW_ROW_TYPES[c]),
  )
  return piece`insert into outbox (${raw(NEW_ROW_COLUMNS.join(', '))}) select ${joinPieces(columns)} from ${raw(source)}`
}
