/**
 * The webhook fan-out of audit events (docs/webhooks.md): one `webhook` outbox row per event and matching
 * active endpoint, written by the statement or transaction that writes the event. And the guard that
 * lets an audited statement leave the fan-out out while no endpoint is active (migration 0010).
 */
import type { CompiledQuery, Kysely, QueryResult } from 'kysely'
import type { Database } from '../db/schema.js'
import { type Piece, param, piece } from '../db/statement-pieces.js'
import { WEBHOOK_KIND } from './outbox.repository.js'

/**
 * The fan-out of the events in `events` (a relation with id, occurred, action, tenant_id and
 * ancestor_ids, the tenant's ancestors): one `webhook` outbox row per event and matching active endpoint —
 * the event's tenant's, or an ancestor's with includeSubTenants; patterns "*", "membership.*" or an exact
 * action. The outbox row's id is the Standard Webhooks `webhook-id`; its ordering key (the endpoint) keeps
 * deliveries in order.
 */
export function webhookFanOut(events: Piece): Piece {
  return piece`
    insert into outbox (id, tenant_id, kind, payload, next_attempt_at, created, ordering_key)
    select gen_random_uuid(), w.tenant_id, ${param(WEBHOOK_KIND, 'text')},
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

/**
 * How a statement writes its event: `fan-out` queues the webhook deliveries in the same statement;
 * `guarded` leaves them out and is refused (nothing written) while any endpoint is active.
 */
export type AuditForm = 'fan-out' | 'guarded'

/** SQLSTATE of tenantry_no_active_webhook (migration 0010). */
const ACTIVE_WEBHOOK = 'TW001'
/** How long a process writes the fan-out form after it met an active endpoint, before trying again. */
const FAN_OUT_FOR_MS = 60_000

/**
 * When this process last met an active webhook endpoint. Only a hint for choosing the form of the next
 * statement: the guarded form is refused while any endpoint is active, and the fan-out form is right
 * either way, so a stale or shared value costs time, never an event — which is why it may be
 * process-wide (docs/architecture.md, "State").
 */
let metActiveWebhookAt = Number.NEGATIVE_INFINITY

/**
 * Runs a statement that writes an audit event (audited-statement.ts). While no webhook endpoint is
 * active — the usual case — it runs the `guarded` form, without the fan-out; when the guard meets an
 * active endpoint the statement wrote nothing, and it runs again in the `fan-out` form, which this
 * process then keeps for a minute. In a transaction a refused statement would abort the transaction, so
 * there it runs the fan-out form at once.
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
