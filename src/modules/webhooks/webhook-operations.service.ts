import { randomBytes } from 'node:crypto'
import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { decryptSecret, encryptSecret, type SecretEnvelope } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import type { WebhookRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { createOutboundFetch, outboundPolicy } from '../../http/outbound.js'
import { updateTenantOwnedRow } from '../../http/request-context.js'
import { WEBHOOK_KIND } from '../../outbox/outbox.repository.js'
import { sendNow } from '../../outbox/send-now.js'
import {
  type DeliveryPayload,
  TEST_EVENT,
  WEBHOOK_DELIVERY_DEFAULTS,
  WebhookDeliverer,
} from '../../outbox/webhook-delivery.js'
import {
  previousWebhookSecretAssociatedData,
  webhookSecretAssociatedData,
} from '../../outbox/webhook-signature.js'
import { auditActorColumns, MASKED, recordAudit } from '../audit/audit.repository.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import { findDelivery, findMessageRow, findWebhook, nextAttemptOf } from './webhooks.repository.js'
import type { Delivery, NewWebhook } from './webhooks.schemas.js'
import { MANAGE, toDelivery, toWebhook, webhookNotFound } from './webhooks.service.js'

/**
 * What an administrator does to an endpoint besides editing it (docs/webhooks.md#operations-test-redeliver-rotate-the-secret): send a test event now,
 * redeliver one delivery now, and rotate the signing secret. The first two go through the delivery path
 * the worker uses (WebhookDeliverer: outbound rule, Standard Webhooks headers, the delivery log) and
 * answer the attempt they recorded.
 */

/** How long the replaced secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000

function deliverer(ctx: ServiceContext): WebhookDeliverer {
  return new WebhookDeliverer(ctx, {
    ...WEBHOOK_DELIVERY_DEFAULTS,
    fetch: createOutboundFetch(outboundPolicy(ctx.config)),
  })
}

async function requireWebhook(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
): Promise<WebhookRow> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, MANAGE)
  const row = await findWebhook(ctx.db, tenant.id, id.toLowerCase())
  if (!row) throw webhookNotFound()
  return row
}

async function recordedAttempt(ctx: ServiceContext, webhook: WebhookRow, attemptId: string) {
  const row = await findDelivery(ctx.db, webhook.tenant_id, webhook.id, attemptId)
  if (!row) throw new Error(`delivery attempt ${attemptId} was recorded but cannot be read`)
  return toDelivery(row)
}

/**
 * `POST …/webhooks/{id}/test`: a `webhook.test` event, sent now by this request (outbox/send-now.ts: it
 * jumps no queue, and a worker sends it only if this process dies mid-send), its attempt recorded in the
 * delivery log and answered; a disabled endpoint gets it too (checking a repaired receiver before
 * re-enabling). One attempt, no retry. It is no audit event: it changes nothing but the delivery log.
 */
export async function sendTestEvent(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
): Promise<Delivery> {
  const webhook = await requireWebhook(ctx, actor, tenantId, id)
  const now = ctx.clock.now()
  const payload: DeliveryPayload = {
    webhookId: webhook.id,
    action: TEST_EVENT,
    test: true,
    timestamp: now.toISOString(),
    data: {
      webhookId: webhook.id,
      tenantId: webhook.tenant_id,
      requestedBy: auditActorColumns(actor),
      message: 'A test event from Tenantry: this endpoint receives and verifies its webhooks.',
    },
  }
  const message = {
    id: newId(),
    tenantId: webhook.tenant_id,
    kind: WEBHOOK_KIND,
    payload: { ...payload },
    now,
  }
  const sent = await sendNow(ctx, message, (row) => deliverer(ctx).deliverRow(row))
  if (!sent.attemptId) throw new Error('the test event was not attempted')
  return recordedAttempt(ctx, webhook, sent.attemptId)
}

/**
 * `POST …/webhooks/{id}/deliveries/{deliveryId}/retry`: the message of that attempt sent again now, with
 * the same `webhook-id` (receivers de-duplicate on it), as its next attempt. Only to an active endpoint:
 * a disabled one receives no events (re-enable it first; a test event needs no such step).
 */
export async function redeliver(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
  deliveryId: string,
): Promise<Delivery> {
  const webhook = await requireWebhook(ctx, actor, tenantId, id)
  const delivery = await findDelivery(ctx.db, webhook.tenant_id, webhook.id, deliveryId.toLowerCase())
  if (!delivery)
    throw new AppError('webhook_delivery_not_found', 'No such delivery attempt of this webhook endpoint')
  if (!webhook.active)
    throw new AppError(
      'invalid_state_transition',
      'This endpoint is disabled; re-enable it (PUT {"active": true}) before redelivering its events',
    )
  const message = await findMessageRow(ctx.db, webhook.id, delivery.message_id)
  if (!message) throw new AppError('invalid_state_transition', 'This delivery’s message is no longer kept')
  const attempt = await nextAttemptOf(ctx.db, webhook.id, delivery.message_id)
  const outcome = await deliverer(ctx).redeliver(message, attempt)
  if ('refused' in outcome)
    throw new AppError('invalid_state_transition', `Cannot redeliver: ${outcome.refused}`)
  return recordedAttempt(ctx, webhook, outcome.attemptId)
}

/**
 * `POST …/webhooks/{id}/rotate-secret`: a new signing secret, answered once. The replaced one is kept,
 * encrypted, and signs every delivery beside the new one for 24 hours (two `v1,…` entries in
 * `webhook-signature`), so receivers can switch without losing a message; a second rotation within those
 * hours replaces it (only the secret being replaced keeps verifying). Audited, with the secret masked.
 */
export async function rotateWebhookSecret(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
): Promise<NewWebhook> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, MANAGE)
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const now = ctx.clock.now()
  const expires = new Date(now.getTime() + ROTATION_OVERLAP_MS)
  const rotated = await ctx.db.transaction().execute(async (tx) => {
    const before = await findWebhook(tx, tenant.id, id.toLowerCase(), { forUpdate: true })
    if (!before) return undefined
    const replaced = decryptSecret(
      ctx.keys,
      before.secret as unknown as SecretEnvelope,
      webhookSecretAssociatedData(before.tenant_id, before.id),
    )
    const after = await updateTenantOwnedRow(tx, 'webhooks', before.tenant_id, before.id, {
      secret: JSON.stringify(
        encryptSecret(ctx.keys, secret, webhookSecretAssociatedData(before.tenant_id, before.id)),
      ),
      previous_secret: JSON.stringify(
        encryptSecret(ctx.keys, replaced, previousWebhookSecretAssociatedData(before.tenant_id, before.id)),
      ),
      previous_secret_expires: expires,
      updated: now,
      updated_by: actor.principalId,
    })
    if (!after || after === 'stale') throw new Error('the locked webhook row could not be updated')
    await recordAudit(tx, ctx.clock, actor, {
      action: 'webhook.secret_rotated',
      tenantId: after.tenant_id,
      target: { type: 'webhook', id: after.id },
      changes: {
        secret: [MASKED, MASKED],
        previousSecretExpires: [before.previous_secret_expires?.toISOString() ?? null, expires.toISOString()],
      },
    })
    return after
  })
  if (!rotated) throw webhookNotFound()
  return { ...toWebhook(rotated), secret }
}
