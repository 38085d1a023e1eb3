import { randomBytes } from 'node:crypto'
import type { Selectable, Updateable } from 'kysely'
import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { encryptSecret } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import type { WebhookDeliveriesTable, WebhookRow, WebhooksTable } from '../../db/schema.js'
import { listTenantOwnedRows } from '../../db/tenant-owned.js'
import { AppError, invalidField } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { OutboundRefusedError, outboundPolicy } from '../../http/outbound.js'
import { checkOutboundAddress } from '../../http/outbound-save-check.js'
import { type Page, readPage } from '../../http/pagination.js'
import { updateTenantOwnedRow } from '../../http/request-context.js'
import { webhookSecretAssociatedData } from '../../outbox/webhook-signature.js'
import { type Changes, changesBetween, MASKED, recordAudit } from '../audit/audit.repository.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import { findWebhook, insertWebhook, listDeliveries } from './webhooks.repository.js'
import type {
  CreateWebhookInput,
  Delivery,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  NewWebhook,
  UpdateWebhookInput,
  Webhook,
} from './webhooks.schemas.js'

export const MANAGE = ['MANAGE_WEBHOOKS'] as const

export function webhookNotFound(): AppError {
  return new AppError('webhook_not_found', 'Webhook not found')
}

/** The URL under the outbound rule as far as it can be checked when saved (its host resolved); connect time checks again. */
async function checkUrl(ctx: ServiceContext, url: string): Promise<string> {
  try {
    return (await checkOutboundAddress(url, outboundPolicy(ctx.config, ctx.outboundLookup))).href
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw invalidField('url', error.message)
    throw error
  }
}

const AUDIT_FIELDS = ['url', 'events', 'active', 'includeSubTenants'] as const
const auditView = (row: Partial<WebhookRow>) => ({
  url: row.url,
  events: row.events,
  active: row.active,
  includeSubTenants: row.include_sub_tenants,
})

export async function createWebhook(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  input: CreateWebhookInput,
): Promise<NewWebhook> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, MANAGE)
  const url = await checkUrl(ctx, input.url)
  const id = newId()
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const now = ctx.clock.now()
  const row: WebhookRow = {
    tenant_id: tenant.id,
    id,
    url,
    events: [...new Set(input.events)],
    active: input.active ?? true,
    include_sub_tenants: input.includeSubTenants ?? false,
    secret: encryptSecret(ctx.keys, secret, webhookSecretAssociatedData(tenant.id, id)) as never,
    previous_secret: null,
    previous_secret_expires: null,
    failing_since: null,
    disabled_reason: null,
    created: now,
    created_by: actor.principalId,
    updated: now,
    updated_by: actor.principalId,
  }
  await ctx.db.transaction().execute(async (tx) => {
    await insertWebhook(tx, row)
    const changes: Changes = changesBetween(undefined, auditView(row), AUDIT_FIELDS)
    changes.secret = [null, MASKED]
    await recordAudit(tx, ctx.clock, actor, {
      action: 'webhook.created',
      tenantId: tenant.id,
      target: { type: 'webhook', id },
      changes,
    })
  })
  return { ...toWebhook(row), secret }
}

export async function getWebhook(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
): Promise<Webhook> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, MANAGE)
  const row = await findWebhook(ctx.db, tenant.id, id.toLowerCase())
  if (!row) throw webhookNotFound()
  return toWebhook(row)
}

export async function listTenantWebhooks(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListWebhooksQuery,
): Promise<Page<Webhook>> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, MANAGE)
  return readPage(
    query,
    (window) => listTenantOwnedRows(ctx.db, 'webhooks', tenant.id, window),
    (row) => row.id,
    toWebhook,
  )
}

/** Partial update; `active: true` on a disabled endpoint re-enables it and forgets its failures. */
export async function updateWebhookById(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
  input: UpdateWebhookInput,
): Promise<Webhook> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, MANAGE)
  const set: Updateable<WebhooksTable> & { updated: Date } = {
    updated: ctx.clock.now(),
    updated_by: actor.principalId,
  }
  if (input.url !== undefined) set.url = await checkUrl(ctx, input.url)
  if (input.events !== undefined) set.events = [...new Set(input.events)]
  if (input.includeSubTenants !== undefined) set.include_sub_tenants = input.includeSubTenants
  if (input.active !== undefined) {
    set.active = input.active
    if (input.active) {
      set.failing_since = null
      set.disabled_reason = null
    }
  }
  const updated = await ctx.db.transaction().execute(async (tx) => {
    const before = await findWebhook(tx, tenant.id, id.toLowerCase())
    if (!before) return undefined
    const after = await updateTenantOwnedRow(tx, 'webhooks', tenant.id, before.id, set)
    if (after === 'stale') throw preconditionFailed()
    if (!after) return undefined
    await recordAudit(tx, ctx.clock, actor, {
      action: 'webhook.updated',
      tenantId: tenant.id,
      target: { type: 'webhook', id: after.id },
      changes: changesBetween(auditView(before), auditView(after), AUDIT_FIELDS),
    })
    return after
  })
  if (!updated) throw webhookNotFound()
  return toWebhook(updated)
}

export async function listWebhookDeliveries(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
  query: ListDeliveriesQuery,
): Promise<Page<Delivery>> {
  const webhook = await getWebhook(ctx, actor, tenantId, id)
  return readPage(
    query,
    (window) => listDeliveries(ctx.db, webhook.tenantId, webhook.id, window),
    (row) => row.id,
    toDelivery,
  )
}

/** A delivery attempt as the API shows it. */
export function toDelivery(row: Selectable<WebhookDeliveriesTable>): Delivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    messageId: row.message_id,
    eventId: row.event_id,
    action: row.action,
    attempt: row.attempt,
    outcome: row.outcome,
    responseStatus: row.response_status,
    error: row.error,
    durationMs: row.duration_ms,
    attemptedAt: row.attempted_at.toISOString(),
  }
}

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    url: row.url,
    events: row.events,
    active: row.active,
    includeSubTenants: row.include_sub_tenants,
    failingSince: row.failing_since?.toISOString() ?? null,
    previousSecretExpires: row.previous_secret_expires?.toISOString() ?? null,
    disabledReason: row.disabled_reason,
    created: row.created.toISOString(),
    createdBy: row.created_by,
    updated: row.updated.toISOString(),
    updatedBy: row.updated_by,
  }
}
