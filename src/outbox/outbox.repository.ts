import { type Kysely, type RawBuilder, type SelectQueryBuilder, sql, type Transaction } from 'kysely'
import type { Database, OutboxRow } from '../db/schema.js'

/**
 * SQL for the mail outbox (API.md §6). Rows are written inside the transaction of the change that causes
 * them and claimed by any number of workers with FOR UPDATE SKIP LOCKED, so that each row is handed to
 * one worker at a time and nothing is lost when a worker dies (its lease runs out and another takes it).
 */

type Executor = Kysely<Database> | Transaction<Database>

export const INVITATION_EMAIL = 'invitation_email'
export const PASSWORD_RESET_EMAIL = 'password_reset_email'
/** A webhook delivery (payload: webhookId, eventId, action); ordering_key is the webhook's id. */
export const WEBHOOK_KIND = 'webhook'

export interface NewOutboxRow {
  id: string
  tenantId: string | null
  kind: string
  payload: Record<string, unknown>
  now: Date
}

/**
 * The one column list of a new outbox row, with each column's SQL type. Every insert into outbox names
 * these (insertOutboxRows, insertOutboxRowFrom); the other columns take their defaults: queued, no
 * attempt yet, not leased.
 */
const NEW_ROW_TYPES = {
  id: 'uuid',
  tenant_id: 'uuid',
  kind: 'text',
  payload: 'jsonb',
  next_attempt_at: 'timestamptz',
  created: 'timestamptz',
} as const
type NewRowColumn = keyof typeof NEW_ROW_TYPES
const NEW_ROW_COLUMNS = Object.keys(NEW_ROW_TYPES) as NewRowColumn[]
const COLUMN_LIST = sql.raw(NEW_ROW_COLUMNS.join(', '))
const typeOf = (column: NewRowColumn) => sql.raw(NEW_ROW_TYPES[column])

/** The one builder of a new row's values: due at once. */
function outboxValues(row: NewOutboxRow): Record<NewRowColumn, string | null> {
  const now = row.now.toISOString()
  return {
    id: row.id,
    tenant_id: row.tenantId,
    kind: row.kind,
    payload: JSON.stringify(row.payload),
    next_attempt_at: now,
    created: now,
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

/** The due rows a claim may take: queued, due, and not leased (or their lease has run out). */
type DueRows = SelectQueryBuilder<Database, 'outbox', { id: string }>

/**
 * The one claim: leases the rows `pick` chooses among the due ones until `lockUntil`, in one short
 * statement (its own transaction) that locks them with SKIP LOCKED — rows another worker is claiming
 * are skipped, not waited for. The attempt is counted at claim time, so a worker that dies mid-send
 * still uses up an attempt.
 */
function claim(
  db: Executor,
  now: Date,
  lockUntil: Date,
  pick: (due: DueRows) => DueRows,
): Promise<OutboxRow[]> {
  return db
    .updateTable('outbox')
    .set({ locked_until: lockUntil, attempts: sql`attempts + 1` })
    .where('id', 'in', (eb) =>
      pick(
        eb
          .selectFrom('outbox')
          .select('id')
          .where('status', '=', 'queued')
          .where('next_attempt_at', '<=', now)
          .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', now)])),
      )
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute()
}

/** Claims up to `limit` due rows for one worker, oldest first, found through the due index. */
export async function claimDueRows(
  db: Executor,
  now: Date,
  lockUntil: Date,
  limit: number,
): Promise<OutboxRow[]> {
  return claim(db, now, lockUntil, (due) =>
    due
      // Rows sharing an ordering key (a webhook endpoint) go one at a time, oldest first: a row waits
      // while an earlier one of its key is still queued (being sent, or waiting for its retry).
      .where(
        sql<boolean>`(ordering_key is null or not exists (
          select 1 from outbox earlier
          where earlier.ordering_key = outbox.ordering_key and earlier.status = 'queued'
            and earlier.seq < outbox.seq))`,
      )
      .orderBy('next_attempt_at')
      .limit(limit),
  )
}

/**
 * claimDueRows for rows whose ids are known (committed in this process, which nudged its worker with
 * them): found by primary key, so the claim does not walk the due index. That index keeps an entry for
 * every row sent since the table was last vacuumed, and a claim that scans it from its oldest end steps
 * over all of them: with mail flowing at a thousand a second a claim cost milliseconds (docs/performance.md).
 * Rows with an ordering key (webhook deliveries) are left to claimDueRows, which keeps their order.
 */
export async function claimRowsById(
  db: Executor,
  ids: readonly string[],
  now: Date,
  lockUntil: Date,
): Promise<OutboxRow[]> {
  if (ids.length === 0) return []
  return claim(db, now, lockUntil, (due) =>
    due.where(sql<boolean>`id = any (${ids}::uuid[])`).where('ordering_key', 'is', null),
  )
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
    .where('id', 'in', ids)
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
 * Deletes a user's not-yet-sent password-reset mail: a newer link (or a password set meanwhile) has made
 * its link dead, so it must not go out.
 */
export async function deleteQueuedPasswordResetMail(db: Executor, userId: string): Promise<void> {
  await db
    .deleteFrom('outbox')
    .where('kind', '=', PASSWORD_RESET_EMAIL)
    .where('status', '=', 'queued')
    .where(sql<boolean>`payload->>'userId' = ${userId}`)
    .execute()
}

/** The delivery state of a user's latest password-reset mail (queued, sent, failed), if any. */
export async function latestPasswordResetMailStatus(
  db: Executor,
  userId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('outbox')
    .select('status')
    .where('kind', '=', PASSWORD_RESET_EMAIL)
    .where(sql<boolean>`payload->>'userId' = ${userId}`)
    .orderBy('created', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row?.status
}

/**
 * One new row as `insert into outbox … select … from <source>`, for a statement that writes it together
 * with the change causing it (a data-modifying WITH): `payloadAddition`, a jsonb expression over the
 * source without parameters, is merged into the payload (the id of the membership the same statement
 * inserts). No row is written when the source is empty. Its parameters, in order: outboxRowParameters.
 */
export function insertOutboxRowFrom(
  row: NewOutboxRow,
  source: string,
  payloadAddition: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const values = outboxValues(row)
  const columns = NEW_ROW_COLUMNS.map((c) =>
    c === 'payload' ? sql`${values.payload}::jsonb || ${payloadAddition}` : sql`${values[c]}::${typeOf(c)}`,
  )
  return sql`insert into outbox (${COLUMN_LIST}) select ${sql.join(columns)} from ${sql.raw(source)}`
}

/** The parameters of insertOutboxRowFrom, in the order it places them (db/statement-texts.ts). */
export function outboxRowParameters(row: NewOutboxRow): unknown[] {
  const values = outboxValues(row)
  return NEW_ROW_COLUMNS.map((c) => values[c])
}
