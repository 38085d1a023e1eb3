import { type Kysely, sql, type Updateable } from 'kysely'
import type { Database, WebhookRow, WebhooksTable } from '../../db/schema.js'
import type { PageWindow } from '../../http/pagination.js'
import { updateTenantOwnedRow } from '../../http/request-context.js'
import { WEBHOOK_KIND } from '../../outbox/outbox.repository.js'

/** SQL for a tenant's webhook endpoints and their delivery attempts (docs/webhooks.md). */

export async function insertWebhook(db: Kysely<Database>, row: WebhookRow): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({ ...row, secret: JSON.stringify(row.secret), previous_secret: null })
    .execute()
}

export async function findWebhook(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<WebhookRow | undefined> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function listWebhooks(
  db: Kysely<Database>,
  tenantId: string,
  page: PageWindow,
): Promise<WebhookRow[]> {
  let query = db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).orderBy('id')
  if (page.afterId) query = query.where('id', '>', page.afterId)
  if (page.limit !== undefined) query = query.limit(page.limit + 1)
  return query.execute()
}

/**
 * One statement: the write and, when the request carried If-Match, the check that the row is still the
 * version the caller read (db/row-version.ts). 'stale': nothing written, the If-Match names another version.
 */
export async function updateWebhook(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  changes: Updateable<WebhooksTable> & { updated: Date },
): Promise<WebhookRow | 'stale' | undefined> {
  return updateTenantOwnedRow(db, 'webhooks', tenantId, id, changes)
}

/** A webhook's attempts, newest first (ids are UUIDv7: time order). */
export async function listDeliveries(
  db: Kysely<Database>,
  tenantId: string,
  webhookId: string,
  page: PageWindow,
) {
  let query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .orderBy('id', 'desc')
  if (page.afterId) query = query.where('id', '<', page.afterId)
  if (page.limit !== undefined) query = query.limit(page.limit + 1)
  return query.execute()
}

/** The endpoint's row, locked until the transaction ends (a rotation reads and replaces its secret). */
export async function lockWebhook(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<WebhookRow | undefined> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

/** One delivery attempt of one endpoint. */
export async function findDelivery(db: Kysely<Database>, tenantId: string, webhookId: string, id: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The number the next attempt of a message gets: one past the highest recorded. */
export async function nextAttemptOf(db: Kysely<Database>, webhookId: string, messageId: string) {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.max('attempt').as('last'))
    .where('webhook_id', '=', webhookId)
    .where('message_id', '=', messageId)
    .executeTakeFirst()
  return Number(row?.last ?? 0) + 1
}

/** The outbox row of an endpoint's message (its id is the message's webhook-id). */
export async function findMessageRow(db: Kysely<Database>, webhookId: string, messageId: string) {
  return db
    .selectFrom('outbox')
    .selectAll()
    .where('id', '=', messageId)
    .where('kind', '=', WEBHOOK_KIND)
    .where(sql<boolean>`payload->>'webhookId' = ${webhookId}`)
    .executeTakeFirst()
}

/** Destroys the replaced secrets whose 24 h after a rotation are over (the hourly sweep). */
export async function forgetExpiredPreviousSecrets(db: Kysely<Database>, now: Date): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ previous_secret: null, previous_secret_expires: null })
    .where('previous_secret_expires', '<=', now)
    .execute()
}
