import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Keys } from '../crypto/keys.js'
import { decryptSecret, type SecretEnvelope } from '../crypto/secrets.js'
import type { Database, OutboxRow } from '../db/schema.js'
import type { OutboundFetch } from '../http/outbound.js'
import { toAuditEventRecord } from './audit-event.js'
import { recordAudit } from './audit-trail.js'
import { markFailed, markRetry } from './outbox.repository.js'
import {
  disableWebhook,
  failQueuedDeliveries,
  loadDelivery,
  markFailing,
  markHealthy,
  recordAttempt,
} from './webhook.repository.js'
import { signWebhook, webhookSecretAssociatedData } from './webhook-signature.js'

export interface WebhookDeliveryOptions {
  /** First retry delay; doubles per attempt up to maxBackoffMs (default 5 s → 1 h). */
  baseBackoffMs: number
  maxBackoffMs: number
  /** An endpoint failing this long without a success is disabled (default 24 h). */
  disableAfterMs: number
  /** The outbound fetch (the outbound rule of API.md §13). */
  fetch: OutboundFetch
}

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
    const { db, clock } = this.deps
    const payload = row.payload as { webhookId: string; eventId: string; action: string }
    const log = this.deps.logger.child({
      webhookId: payload.webhookId,
      messageId: row.id,
      attempt: row.attempts,
    })
    const { webhook, event } = await loadDelivery(db, payload.webhookId, payload.eventId)
    if (!webhook?.active || !event) {
      const reason = event ? 'endpoint disabled or deleted' : 'event no longer exists'
      await markFailed(db, row.id, reason)
      log.warn({ reason }, 'webhook delivery dropped')
      return false
    }
    const body = JSON.stringify({
      type: event.action,
      timestamp: event.occurred.toISOString(),
      data: toAuditEventRecord(event),
    })
    const now = clock.now()
    const timestamp = Math.floor(now.getTime() / 1000)
    let status: number | null = null
    let error: string | null = null
    const started = performance.now()
    try {
      const secret = decryptSecret(
        this.deps.keys,
        webhook.secret as unknown as SecretEnvelope,
        webhookSecretAssociatedData(webhook.tenant_id, webhook.id),
      )
      const response = await this.options.fetch(webhook.url, {
        method: 'POST',
        body,
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Tenantry-Webhooks/1',
          'webhook-id': row.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secret, row.id, timestamp, body),
        },
      })
      status = response.status
      await response.body?.cancel().catch(() => undefined)
      if (status < 200 || status > 299) error = `answered HTTP ${status}`
    } catch (caught) {
      error = (caught instanceof Error ? caught.message : String(caught)).slice(0, 500)
    }
    const attempt = {
      tenantId: webhook.tenant_id,
      webhookId: webhook.id,
      messageId: row.id,
      eventId: event.id,
      action: event.action,
      attempt: row.attempts,
      responseStatus: status,
      durationMs: Math.round(performance.now() - started),
      at: now,
    }
    if (error === null) {
      await recordAttempt(db, { ...attempt, outcome: 'succeeded', error: null })
      await markHealthy(db, webhook.id)
      this.stats.delivered += 1
      log.info({ action: event.action, status, durationMs: attempt.durationMs }, 'webhook delivered')
      return true
    }
    await recordAttempt(db, { ...attempt, outcome: 'failed', error })
    this.stats.failedAttempts += 1
    const failingSince = await markFailing(db, webhook.id, now)
    if (failingSince && now.getTime() - failingSince.getTime() >= this.options.disableAfterMs) {
      await this.#disable(webhook.tenant_id, webhook.id, now)
      log.error(
        { error, failingSince: failingSince.toISOString() },
        'webhook endpoint disabled after failing',
      )
      return false
    }
    const next = new Date(now.getTime() + this.#backoff(row.attempts))
    await markRetry(db, row.id, error, next)
    log.warn({ error, status, nextAttemptAt: next.toISOString() }, 'webhook not delivered; will retry')
    return false
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
