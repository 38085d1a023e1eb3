import { type Kysely, sql } from 'kysely'
import { newId } from '../crypto/uuid7.js'
import { nextUpdated } from '../db/row-version.js'
import type { Database } from '../db/schema.js'

/** SQL the worker needs to deliver webhooks (docs/webhooks.md) and record each attempt. */

export async function loadDelivery(db: Kysely<Database>, webhookId: string, eventId: string | undefined) {
  const webhook = await db.selectFrom('webhooks').selectAll().where('id', '=', webhookId).executeTakeFirst()
  const event =
    eventId === undefined
      ? undefined
      : await db.selectFrom('audit_events').selectAll().where('id', '=', eventId).executeTakeFirst()
  return { webhook, event }
}

export interface Attempt {
  tenantId: string
  webhookId: string
  messageId: string
  eventId: string | null
  action: string
  attempt: number
  outcome: 'succeeded' | 'failed'
  responseStatus: number | null
  error: string | null
  durationMs: number
  at: Date
}

/** Records one attempt; answers its id (the delivery log's record). */
export async function recordAttempt(db: Kysely<Database>, a: Attempt): Promise<string> {
  const id = newId()
  await db
    .insertInto('webhook_deliveries')
    .values({
      tenant_id: a.tenantId,
      webhook_id: a.webhookId,
      id,
      message_id: a.messageId,
      event_id: a.eventId,
      action: a.action,
      attempt: a.attempt,
      outcome: a.outcome,
      response_status: a.responseStatus,
      error: a.error,
      duration_ms: a.durationMs,
      attempted_at: a.at,
    })
    .execute()
  return id
}

/** A success ends the endpoint's run of failures. */
export async function markHealthy(db: Kysely<Database>, webhookId: string): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ failing_since: null })
    .where('id', '=', webhookId)
    .where('failing_since', 'is not', null)
    .execute()
}

/** Starts (or continues) the endpoint's run of failures; returns when it began. */
export async function markFailing(
  db: Kysely<Database>,
  webhookId: string,
  now: Date,
): Promise<Date | undefined> {
  const row = await db
    .updateTable('webhooks')
    .set({ failing_since: sql`coalesce(failing_since, ${now.toISOString()}::timestamptz)` })
    .where('id', '=', webhookId)
    .returning('failing_since')
    .executeTakeFirst()
  return row?.failing_since ?? undefined
}

/** Disables an active endpoint; true when this call did it (so its event is written once). */
export async function disableWebhook(db: Kysely<Database>, webhookId: string, reason: string, now: Date) {
  return db
    .updateTable('webhooks')
    .set({ active: false, disabled_reason: reason, updated: nextUpdated(now) })
    .where('id', '=', webhookId)
    .where('active', '=', true)
    .returning(['tenant_id', 'id'])
    .executeTakeFirst()
}

/** Gives up every queued delivery of an endpoint (it was disabled or deleted). */
export async function failQueuedDeliveries(db: Kysely<Database>, webhookId: string, reason: string) {
  await db
    .updateTable('outbox')
    .set({ status: 'failed', locked_until: null, last_error: reason })
    .where('ordering_key', '=', webhookId)
    .where('status', '=', 'queued')
    .execute()
}

/**
 * Invitations whose window has passed and whose expiry no event announced yet: marks them announced and
 * returns them, in one statement; two workers running it at once announce each invitation once.
 */
export async function claimExpiredInvitations(db: Kysely<Database>, now: Date, limit = 500) {
  const { rows } = await sql<{ tenant_id: string; user_id: string; invitation_expiry_date: Date }>`
    update tenant_users m set invitation_expiry_announced = m.invitation_expiry_date
    from (
      select tenant_id, user_id from tenant_users
      where status = 'invited' and invitation_expiry_date <= ${now.toISOString()}::timestamptz
        and invitation_expiry_announced is distinct from invitation_expiry_date
      limit ${limit}
      for update skip locked
    ) due
    where m.tenant_id = due.tenant_id and m.user_id = due.user_id
    returning m.tenant_id, m.user_id, m.invitation_expiry_date
  `.execute(db)
  return rows
}

/** Deletes delivery attempts older than `before` (kept as long as the audit events). */
export async function deleteAttemptsBefore(db: Kysely<Database>, before: Date): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('attempted_at', '<', before).execute()
}

/** Deletes audit events older than `before`, a bounded batch at a time; how many went. */
export async function deleteEventsBefore(db: Kysely<Database>, before: Date, batch = 5_000): Promise<number> {
  const result = await db
    .deleteFrom('audit_events')
    .where('id', 'in', (eb) =>
      eb.selectFrom('audit_events').select('id').where('occurred', '<', before).limit(batch),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
