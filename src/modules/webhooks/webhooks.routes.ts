import { created } from '../../http/created.js'
import { PageBody, pageBody } from '../../http/pagination.js'
import { Result } from '../../http/schemas.js'
import {
  answerTenantList,
  answerTenantRecord,
  answerTenantRecordChange,
} from '../../http/tenant-record-answers.js'
import {
  tenantCreateSchema,
  tenantListSchema,
  tenantRecordSchema,
  tenantRecordUpdateSchema,
} from '../../http/tenant-record-schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { redeliver, rotateWebhookSecret, sendTestEvent } from './webhook-operations.service.js'
import {
  CreateWebhookBody,
  DeliveryParams,
  DeliverySchema,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  NewWebhookSchema,
  UpdateWebhookBody,
  WebhookParams,
  WebhookSchema,
} from './webhooks.schemas.js'
import {
  createWebhook,
  getWebhook,
  listTenantWebhooks,
  listWebhookDeliveries,
  updateWebhookById,
} from './webhooks.service.js'

const tags = ['webhooks']
const description = 'Needs MANAGE_WEBHOOKS effective in the tenant.'

/** A tenant's webhook endpoints (docs/webhooks.md); deliveries follow the Standard Webhooks specification. */
export const webhookRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tenants/:tenantId/webhooks',
    {
      schema: tenantCreateSchema(
        {
          tags,
          operationId: 'createWebhook',
          summary: 'Create a webhook endpoint; its signing secret is shown once',
          description: `${description} The URL obeys the outbound rule (https, no private or loopback address). Events are action patterns: "membership.removed", "membership.*" or "*".`,
        },
        CreateWebhookBody,
        NewWebhookSchema,
      ),
    },
    async (request, reply) => {
      const webhook = await createWebhook(ctx, request.actor, request.params.tenantId, request.body)
      return created(reply, `/v1/tenants/${webhook.tenantId}/webhooks/${webhook.id}`, webhook, {
        secret: true,
      })
    },
  )

  app.get(
    '/tenants/:tenantId/webhooks',
    {
      schema: tenantListSchema(
        {
          tags,
          operationId: 'listWebhooks',
          summary: 'List the webhook endpoints of a tenant (never their secrets)',
          description,
        },
        ListWebhooksQuery,
        WebhookSchema,
      ),
    },
    answerTenantList(ctx, listTenantWebhooks),
  )

  app.get(
    '/tenants/:tenantId/webhooks/:webhookId',
    {
      schema: tenantRecordSchema(
        { tags, operationId: 'getWebhook', summary: 'Get a webhook endpoint', description },
        WebhookParams,
        WebhookSchema,
        'webhook_not_found',
      ),
    },
    answerTenantRecord(ctx, 'webhookId', getWebhook),
  )

  app.put(
    '/tenants/:tenantId/webhooks/:webhookId',
    {
      config: { ifMatch: 'webhooks' },
      schema: tenantRecordUpdateSchema(
        {
          tags,
          operationId: 'updateWebhook',
          summary: 'Update a webhook endpoint (partial: url, events, active, includeSubTenants)',
          description: `${description} "active": true re-enables an endpoint disabled after 24 h of failures.`,
        },
        WebhookParams,
        UpdateWebhookBody,
        WebhookSchema,
        ['webhook_not_found'],
      ),
    },
    answerTenantRecordChange(ctx, 'webhookId', updateWebhookById),
  )

  app.get(
    '/tenants/:tenantId/webhooks/:webhookId/deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        errors: ['tenant_not_found', 'permission_denied', 'webhook_not_found'],
        summary: 'List the delivery attempts of a webhook endpoint, newest first',
        description: `${description} One record per attempt; retries of one event share its messageId (the webhook-id header).`,
        params: WebhookParams,
        querystring: ListDeliveriesQuery,
        response: {
          200: PageBody(DeliverySchema),
        },
      },
    },
    async (request) => {
      const { tenantId, webhookId } = request.params
      const page = await listWebhookDeliveries(ctx, request.actor, tenantId, webhookId, request.query)
      return pageBody(page)
    },
  )

  app.post(
    '/tenants/:tenantId/webhooks/:webhookId/test',
    {
      schema: {
        tags,
        operationId: 'sendWebhookTestEvent',
        errors: ['tenant_not_found', 'permission_denied', 'webhook_not_found'],
        summary: 'Send a test event to the endpoint now; answers the attempt',
        description: `${description} A "webhook.test" event, signed like any delivery, sent at once (a disabled endpoint too), recorded in the delivery log; one attempt, no retry. The answer is that attempt: outcome, responseStatus, error.`,
        params: WebhookParams,
        response: { 200: Result(DeliverySchema) },
      },
    },
    async (request) => {
      const { tenantId, webhookId } = request.params
      return { result: await sendTestEvent(ctx, request.actor, tenantId, webhookId) }
    },
  )

  app.post(
    '/tenants/:tenantId/webhooks/:webhookId/deliveries/:deliveryId/retry',
    {
      schema: {
        tags,
        operationId: 'redeliverWebhookDelivery',
        errors: [
          'tenant_not_found',
          'permission_denied',
          'webhook_not_found',
          'webhook_delivery_not_found',
          'invalid_state_transition',
        ],
        summary: 'Redeliver the message of a delivery attempt now, with the same webhook-id',
        description: `${description} The event as it reads now, under the same webhook-id (receivers de-duplicate on it), recorded as the message's next attempt; not retried. A disabled endpoint: 409 (re-enable it first).`,
        params: DeliveryParams,
        response: { 200: Result(DeliverySchema) },
      },
    },
    async (request) => {
      const { tenantId, webhookId, deliveryId } = request.params
      return { result: await redeliver(ctx, request.actor, tenantId, webhookId, deliveryId) }
    },
  )

  app.post(
    '/tenants/:tenantId/webhooks/:webhookId/rotate-secret',
    {
      schema: {
        tags,
        operationId: 'rotateWebhookSecret',
        errors: ['tenant_not_found', 'permission_denied', 'webhook_not_found'],
        summary:
          'Replace the signing secret; the new one is shown once, the old one keeps verifying for 24 h',
        description: `${description} For 24 h every delivery carries two signatures in webhook-signature ("v1,<new> v1,<old>"), so a receiver holding either secret verifies it; then only the new one. previousSecretExpires says until when.`,
        params: WebhookParams,
        response: { 200: Result(NewWebhookSchema) },
      },
    },
    async (request, reply) => {
      const { tenantId, webhookId } = request.params
      const webhook = await rotateWebhookSecret(ctx, request.actor, tenantId, webhookId)
      return reply.header('cache-control', 'no-store').send({ result: webhook })
    },
  )
}
