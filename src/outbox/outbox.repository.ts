import { type Insertable, type Kysely, sql, type Transaction } from 'kysely'
import type { Database, OutboxRow, OutboxTable } from '../db/schema.js'

/**
 * SQL for the mail outbox (API.md §6). Rows are written inside the transaction of the change that causes
 * them and claimed by any number of workers with FOR UPDATE SKIP LOCKED, so that each row is handed to
 * one worker at a time and nothing is lost when a worker dies (its lease runs out and another takes it).
 */

type Executor = Kysely<Database> | Transaction<Database>

export const INVITATION_EMAIL = 'invitation_email'
/** A webhook delivery (payload: webhookId, eventId, action); ordering_key is the webhook's id. */
export const WEBHOOK_KIND = 'webhook'

export interface NewOutboxRow {
  id: string
  tenantId: string | null
  kind: string
  payload: Record<string, unknown>
  now: Date
}

/** The columns of a new outbox row: due at once, not leased. */
function outboxValues(row: NewOutboxRow): Insertable<OutboxTable> {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    kind: row.kind,
    payload: JSON.stringify(row.payload),
    next_attempt_at: row.now,
    locked_until: null,
    last_error: null,
    created: row.now,
    sent_at: null,
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
 * Claims up to `limit` due rows for one worker: one short statement (its own transaction) that locks
 * candidate rows with SKIP LOCKED — rows another worker is claiming are skipped, not waited for — and
 * leases them until `lockUntil`. The attempt is counted at claim time, so a worker that dies mid-send
 * still uses up an attempt.
 */
export async function claimDueRows(
  db: Executor,
  now: Date,
  lockUntil: Date,
  limit: number,
): Promise<OutboxRow[]> {
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
 * Many new outbox rows in one statement (the invitation e-mails of a bulk load's batch): the same values
 * as insertOutboxRow writes (outboxValues), each column one array parameter, zipped back into rows by
 * unnest — one statement text whatever the number of rows.
 */
export async function insertOutboxRows(db: Executor, rows: readonly NewOutboxRow[]): Promise<void> {
  if (rows.length === 0) return
  const values = rows.map(outboxValues)
  const time = (value: unknown) => (value instanceof Date ? value.toISOString() : String(value))
  await sql`
    insert into outbox (id, tenant_id, kind, payload, next_attempt_at, created)
    select id, tenant_id, kind, payload, next_attempt_at, created
    from unnest(
      ${values.map((v) => v.id)}::uuid[],
      ${values.map((v) => v.tenant_id ?? null)}::uuid[],
      ${values.map((v) => v.kind)}::text[],
      ${values.map((v) => v.payload)}::jsonb[],
      ${values.map((v) => time(v.next_attempt_at))}::timestamptz[],
      ${values.map((v) => time(v.created))}::timestamptz[]
    ) as incoming(id, tenant_id, kind, payload, next_attempt_at, created)
  `.execute(db)
}
