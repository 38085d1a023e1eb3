import { type Static, Type } from 'typebox'
import { Body, Nullable, PageQuery, Timestamp, Uuid } from '../../http/schemas.js'

/** Webhook shapes (docs/webhooks.md). The signing secret appears only in the create response, once. */

const EventPattern = Type.String({
  pattern: '^(\\*|[a-z_]+\\.(\\*|[a-z_]+))$',
  maxLength: 100,
  errorMessage: 'must be an action ("membership.removed"), a family ("membership.*") or "*"',
})

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  errorMessage: 'must be an https URL',
  description:
    'https only (http where TENANTRY_OUTBOUND_ALLOW_HTTP is set); never a host that is or resolves to a ' +
    'loopback, private, link-local or metadata address (docs/webhooks.md#the-outbound-rule, checked when saved and ' +
    'on every delivery)',
})

const webhookFields = {
  id: Uuid(),
  tenantId: Uuid(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  active: Type.Boolean(),
  includeSubTenants: Type.Boolean({ description: 'Also the events of every sub-tenant' }),
  failingSince: Nullable(Timestamp({ description: 'Start of the current run of failed deliveries' })),
  previousSecretExpires: Nullable(
    Timestamp({
      description:
        'After a rotation: until when deliveries are also signed with the replaced secret (24 h); null otherwise',
    }),
  ),
  disabledReason: Nullable(Type.String()),
  created: Timestamp(),
  createdBy: Uuid(),
  updated: Timestamp(),
  updatedBy: Uuid(),
}

export const WebhookSchema = Type.Object(webhookFields)
export type Webhook = Static<typeof WebhookSchema>

export const NewWebhookSchema = Type.Object({
  ...webhookFields,
  secret: Type.String({
    description: 'whsec_…: the Standard Webhooks signing secret, shown once (on create and on rotation)',
  }),
})
export type NewWebhook = Static<typeof NewWebhookSchema>

export const CreateWebhookBody = Body(
  {
    url: Url,
    events: Type.Array(EventPattern, { minItems: 1, maxItems: 50 }),
    active: Type.Optional(Type.Boolean()),
    includeSubTenants: Type.Optional(Type.Boolean()),
  },
  { examples: [{ url: 'https://hooks.example.com/tenantry', events: ['membership.*', 'user.erased'] }] },
)
export type CreateWebhookInput = Static<typeof CreateWebhookBody>

export const UpdateWebhookBody = Body(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Type.Array(EventPattern, { minItems: 1, maxItems: 50 })),
    active: Type.Optional(Type.Boolean({ description: 'true re-enables an endpoint disabled for failing' })),
    includeSubTenants: Type.Optional(Type.Boolean()),
  },
  { examples: [{ active: true }] },
)
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>

export const WebhookParams = Type.Object({ tenantId: Uuid(), webhookId: Uuid() })
export const DeliveryParams = Type.Object({ tenantId: Uuid(), webhookId: Uuid(), deliveryId: Uuid() })
export const ListWebhooksQuery = Type.Object({ ...PageQuery })
export type ListWebhooksQuery = Static<typeof ListWebhooksQuery>

export const DeliverySchema = Type.Object({
  id: Uuid(),
  webhookId: Uuid(),
  messageId: Uuid({ description: 'The webhook-id header; the same on every retry of one event' }),
  eventId: Nullable(Uuid()),
  action: Type.String(),
  attempt: Type.Integer(),
  outcome: Type.String({ description: 'succeeded | failed' }),
  responseStatus: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  durationMs: Type.Integer(),
  attemptedAt: Timestamp(),
})
export type Delivery = Static<typeof DeliverySchema>
export const ListDeliveriesQuery = Type.Object({ ...PageQuery })
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>
