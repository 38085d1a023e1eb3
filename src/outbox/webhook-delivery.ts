import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Keys } from '../crypto/keys.js'
import type { Database, OutboxRow, WebhookRow } from '../db/schema.js'
import type { OutboundFetch } from '../http/outbound.js'
import { toAuditEventRecord } from './audit-event.js'
import { recordAudit } from './audit-trail.js'
import { markFailed, markRetry, markSent } from './outbox.repository.js'
import {
  disableWebhook,
  failQueuedDeliveries,
  loadDelivery,
  markFailing,
  markHealthy,
  recordAttempt,
} from './webhook.repository.js'
import { signatureHeader, signingSecrets } from './webhook-signature.js'

/** The type of the event `POST …/webhooks/{id}/test` sends. */
export const TEST_EVENT = 'webhook.test'

/**
 * A `webhook` outbox row's payload: an audit event for an endpoint, or — `test` — a test event whose
 * body is in the row itself (it is no audit event).
 */
export interface DeliveryPayload {
  webhookId: string
  eventId?: string
  action: string
  test?: boolean
  timestamp?: string
  data?: Record<string, unknown>
}

/** What one attempt sends. */
interface Message {
  webhook: WebhookRow
  body: string
  eventId: string | null
  action: string
}

export interface WebhookDeliveryOptions {
  /** First retry delay; doubles per attempt up to maxBackoffMs (default 5 s → 1 h). */
  baseBackoffMs: number
  maxBackoffMs: number
  /** An endpoint failing this long without a success is disabled (default 24 h). */
  disableAfterMs: number
  /** The outbound fetch (the outbound rule of docs/webhooks.md#the-outbound-rule). */
  fetch: OutboundFetch
}

/** Retries from 5 s, doubling, capped at 1 h; disabled after 24 h of failures (docs/webhooks.md). */
export const WEBHOOK_DELIVERY_DEFAULTS = {
  baseBackoffMs: 5_000,
  maxBackoffMs: 3_600_000,
  disableAfterMs: 24 * 3_600_000,
} as const

export interface WebhookDeliveryStats {
  delivered: number
  failedAttempts: number
  disabled: number
}

interface Deps {
  db: Kysely<Database>
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>
  logger: Logger
  clock: Clock
}

/**
 * Delivers one claimed `webhook` outbox row (Standard Webhooks): the body is the audit event as the API
 * shows it — read at delivery time, so an erasure that scrubbed the event also scrubs what is sent —,
 * signed with the endpoint's secret; the row id is the `webhook-id`, the same on every retry. Each attempt
 * is recorded. A failure is retried with backoff; after `disableAfterMs` of failures the endpoint is
 * disabled (a `webhook.disabled` event) and its queued deliveries are given up.
 */
export class WebhookDeliverer {
  readonly stats: WebhookDeliveryStats = { delivered: 0, failedAttempts: 0, disabled: 0 }

  constructor(
    private readonly deps: Deps,
    private readonly options: WebhookDeliveryOptions,
  ) {}

  /** True when delivered (the caller marks the row sent); false when recorded otherwise. */
  async deliver(row: OutboxRow): Promise<boolean> {
    return (await this.deliverRow(row)).sent
  }

  /**
   * deliver, also answering the attempt it recorded: the routes that send at once (a test event) answer
   * it. A test message (payload.test) is one attempt: it goes to a disabled endpoint too, is not retried,
   * and leaves the endpoint's run of failures alone.
   */
  async deliverRow(row: OutboxRow): Promise<{ sent: boolean; attemptId?: string }> {
    const { db } = this.deps
    const payload = row.payload as unknown as DeliveryPayload
    const log = this.#log(payload.webhookId, row.id, row.attempts)
    const message = await this.#load(payload)
    if (typeof message === 'string') {
      await markFailed(db, row.id, message)
      log.warn({ reason: message }, 'webhook delivery dropped')
      return { sent: false }
    }
    const { webhook } = message
    const result = await this.#attempt(message, row.id, row.attempts)
    if (result.error === null) {
      if (!payload.test) await markHealthy(db, webhook.id)
      this.stats.delivered += 1
      log.info(
        { action: message.action, status: result.status, durationMs: result.durationMs },
        'webhook delivered',
      )
      return { sent: true, attemptId: result.attemptId }
    }
    this.stats.failedAttempts += 1
    const { error, status } = result
    if (payload.test) {
      await markFailed(db, row.id, error)
      log.warn({ error, status }, 'webhook test event not delivered')
      return { sent: false, attemptId: result.attemptId }
    }
    const now = result.at
    const failingSince = await markFailing(db, webhook.id, now)
    if (failingSince && now.getTime() - failingSince.getTime() >= this.options.disableAfterMs) {
      await this.#disable(webhook.tenant_id, webhook.id, now)
      log.error(
        { error, failingSince: failingSince.toISOString() },
        'webhook endpoint disabled after failing',
      )
      return { sent: false, attemptId: result.attemptId }
    }
    const next = new Date(now.getTime() + this.#backoff(row.attempts))
    await markRetry(db, row.id, error, next)
    log.warn({ error, status, nextAttemptAt: next.toISOString() }, 'webhook not delivered; will retry')
    return { sent: false, attemptId: result.attemptId }
  }

  /**
   * One more attempt of a message sent before (a redelivery someone asked for): the same `webhook-id`,
   * the body as the event reads now, recorded as the message's next attempt. It is not retried and does
   * not count towards disabling the endpoint; when the message's outbox row still waits for a retry, a
   * success marks it sent, so it does not go out again.
   */
  async redeliver(row: OutboxRow, attempt: number): Promise<{ attemptId: string } | { refused: string }> {
    const payload = row.payload as unknown as DeliveryPayload
    const message = await this.#load(payload)
    if (typeof message === 'string') return { refused: message }
    const log = this.#log(payload.webhookId, row.id, attempt)
    const result = await this.#attempt(message, row.id, attempt)
    if (result.error === null) {
      await markSent(this.deps.db, [row.id], result.at)
      log.info({ action: message.action, status: result.status }, 'webhook redelivered')
    } else {
      log.warn({ error: result.error, status: result.status }, 'webhook redelivery failed')
    }
    return { attemptId: result.attemptId }
  }

  #log(webhookId: string, messageId: string, attempt: number): Logger {
    return this.deps.logger.child({ webhookId, messageId, attempt })
  }

  /** The endpoint and the body of a message; a string says why there is nothing to send. */
  async #load(payload: DeliveryPayload): Promise<Message | string> {
    const { webhook, event } = await loadDelivery(this.deps.db, payload.webhookId, payload.eventId)
    if (!webhook) return 'endpoint deleted'
    if (payload.test) {
      const body = JSON.stringify({ type: TEST_EVENT, timestamp: payload.timestamp, data: payload.data })
      return { webhook, body, eventId: null, action: TEST_EVENT }
    }
    if (!webhook.active) return 'endpoint disabled or deleted'
    if (!event) return 'event no longer exists'
    const body = JSON.stringify({
      type: event.action,
      timestamp: event.occurred.toISOString(),
      data: toAuditEventRecord(event),
    })
    return { webhook, body, eventId: event.id, action: event.action }
  }

  /** Sends a message once, signed, and records the attempt. */
  async #attempt(message: Message, messageId: string, attempt: number) {
    const { webhook, body } = message
    const now = this.deps.clock.now()
    const timestamp = Math.floor(now.getTime() / 1000)
    let status: number | null = null
    let error: string | null = null
    const started = performance.now()
    try {
      const secrets = signingSecrets(this.deps.keys, webhook, now)
      const response = await this.options.fetch(webhook.url, {
        method: 'POST',
        body,
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Tenantry-Webhooks/1',
          'webhook-id': messageId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, messageId, timestamp, body),
        },
      })
      status = response.status
      await response.body?.cancel().catch(() => undefined)
      if (status < 200 || status > 299) error = `answered HTTP ${status}`
    } catch (caught) {
      error = (caught instanceof Error ? caught.message : String(caught)).slice(0, 500)
    }
    const durationMs = Math.round(performance.now() - started)
    const attemptId = await recordAttempt(this.deps.db, {
      tenantId: webhook.tenant_id,
      webhookId: webhook.id,
      messageId,
      eventId: message.eventId,
      action: message.action,
      attempt,
      responseStatus: status,
      durationMs,
      at: now,
      outcome: error === null ? 'succeeded' : 'failed',
      error,
    })
    return { attemptId, status, error, durationMs, at: now }
  }

  async #disable(tenantId: string, webhookId: string, now: Date): Promise<void> {
    const reason = `disabled at ${now.toISOString()}: every delivery failed for ${Math.round(this.options.disableAfterMs / 3_600_000)} h`
    await this.deps.db.transaction().execute(async (tx) => {
      const disabled = await disableWebhook(tx, webhookId, reason, now)
      if (disabled) {
        this.stats.disabled += 1
        await recordAudit(
          tx,
          this.deps.clock,
          { kind: 'system' },
          {
            action: 'webhook.disabled',
            tenantId,
            target: { type: 'webhook', id: webhookId },
            changes: { active: [true, false] },
          },
        )
      }
      await failQueuedDeliveries(tx, webhookId, reason)
    })
  }

  #backoff(attempt: number): number {
    const delay = Math.min(
      this.options.maxBackoffMs,
      this.options.baseBackoffMs * 2 ** Math.max(0, attempt - 1),
    )
    return Math.round(delay * (0.8 + Math.random() * 0.4))
  }
}
