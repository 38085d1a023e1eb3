import { type Kysely, sql } from 'kysely'
import { keysetPage, type PageWindow } from '../../db/keyset.js'
import type { Database, WebhookRow } from '../../db/schema.js'
import { WEBHOOK_KIND } from '../../outbox/outbox.repository.js'

/** SQL for a tenant's webhook endpoints and their delivery attempts (docs/webhooks.md). */

export async function insertWebhook(db: Kysely<Database>, row: WebhookRow): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({ ...row, secret: JSON.stringify(row.secret), previous_secret: null })
    .execute()
}

/** An endpoint's row; `forUpdate`: locked until the transaction ends (a rotation reads and replaces its secret). */
export async function findWebhook(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<WebhookRow | undefined> {
  const query = db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id)
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst()
}

/** A webhook's attempts, newest first (ids are UUIDv7: time order). */
export async function listDeliveries(
  db: Kysely<Database>,
  tenantId: string,
  webhookId: string,
  page: PageWindow,
) {
  const query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
  return keysetPage(query, 'id', page, 'desc').execute()
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
