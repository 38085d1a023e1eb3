import { type Static, Type } from 'typebox'
import { Body, Description, Name, Nullable, PageQuery, Timestamp, Uuid } from '../../http/schemas.js'
import {
  describePropertyKeys,
  INTEGRATION_TYPE_PATTERN,
  INTEGRATION_TYPES,
  SECRET_MASK,
} from './integration-types.js'

/** Integration shapes (docs/product.md#integrations, docs/api.md#integrations). */

const IntegrationType = Type.Enum(INTEGRATION_TYPES, { type: 'string' })
// On input the type is matched ignoring case (docs/api.md, Integrations): the pattern is the list in
// any mix of case, and the service matches with the same pattern (integration-types.ts).
const IntegrationTypeInput = Type.String({
  maxLength: 64,
  pattern: INTEGRATION_TYPE_PATTERN,
  errorMessage: `is not a known type (one of ${INTEGRATION_TYPES.join(', ')}, in any case)`,
  description: `One of ${INTEGRATION_TYPES.join(', ')}, in any case; stored lower-case`,
  examples: ['zendesk'],
})

// The brief's samples send `active` as a quoted string; both spellings are taken.
const Active = Type.Unsafe<boolean | 'true' | 'false'>({
  enum: [true, false, 'true', 'false'],
  description: 'A boolean; the strings "true" and "false" are accepted. Default false.',
})

// Keys depend on the type, so they are checked by the service (integration-types.ts), which names every
// unknown or invalid key; the schema only insists on an object.
const PropertiesInput = Type.Record(Type.String(), Type.Unknown(), {
  description: `Keys by type — ${describePropertyKeys()}. Missing keys default to "" (false for booleans). Secrets sent as "${SECRET_MASK}" on update keep the stored value.`,
})

const IntegrationDescription = Nullable(Description())
const IntegrationName = Name({
  description: 'Unique in the tenant, compared ignoring case and spacing. Default: the type.',
})

/** The brief's `attributes` object. */
const Attributes = Type.Object(
  {
    type: IntegrationTypeInput,
    name: Type.Optional(IntegrationName),
    active: Type.Optional(Active),
    properties: PropertiesInput,
    description: Type.Optional(IntegrationDescription),
  },
  { additionalProperties: false },
)

/**
 * A create body: the brief's `{"attributes": {…}}` or the same fields flat, as existing clients send them.
 * One object with both spellings optional (a top-level union would not drop unknown fields reliably);
 * `type` and `properties` are required inside `attributes` when it is sent, and flat otherwise. The service
 * takes `attributes` when present.
 */
export const CreateIntegrationBody = Body(
  {
    attributes: Type.Optional(Attributes),
    type: Type.Optional(IntegrationTypeInput),
    name: Type.Optional(IntegrationName),
    active: Type.Optional(Active),
    properties: Type.Optional(PropertiesInput),
    description: Type.Optional(IntegrationDescription),
  },
  {
    // `properties` here only name the fields required (their shapes are above).
    if: { required: ['attributes'], properties: { attributes: {} } },
    else: { required: ['type', 'properties'], properties: { type: {}, properties: {} } },
    examples: [
      {
        attributes: {
          type: 'zendesk',
          name: 'Zendesk (support desk)',
          active: true,
          properties: {
            endpointPrefix: 'https://acme.zendesk.example/api/v2',
            username: 'integrations@acme.example',
            password: 'zd-app-password-2026',
            workItems: true,
            interactionFieldId: '360012345678',
          },
          description: 'Tickets for the support queue',
        },
      },
    ],
  },
)
export type CreateIntegrationBody = Static<typeof CreateIntegrationBody>

const UpdateFields = {
  name: Type.Optional(IntegrationName),
  description: Type.Optional(IntegrationDescription),
  active: Type.Optional(Active),
  properties: Type.Optional(PropertiesInput),
}

/** A partial update; the type cannot change. The `attributes` wrapper is accepted here too. */
export const UpdateIntegrationBody = Body(
  {
    ...UpdateFields,
    attributes: Type.Optional(Type.Object(UpdateFields, { additionalProperties: false })),
  },
  { examples: [{ active: false, properties: { password: '********', username: 'ops@acme.example' } }] },
)
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBody>

export const IntegrationSchema = Type.Object({
  id: Uuid(),
  tenantId: Uuid(),
  type: IntegrationType,
  name: Type.String(),
  description: Nullable(Type.String()),
  active: Type.Boolean(),
  // Strings, booleans and flat objects of scalars (twilio's globalDialParams): the response schema
  // serialises nothing else; secrets are masked before (integration-secrets.ts).
  properties: Type.Record(
    Type.String(),
    Type.Union([
      Type.String(),
      Type.Boolean(),
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
    ]),
    {
      description: `Secrets read "${SECRET_MASK}" when set and "" when empty.`,
    },
  ),
  createdBy: Uuid(),
  updatedBy: Uuid(),
  created: Timestamp(),
  updated: Timestamp(),
})
export type Integration = Static<typeof IntegrationSchema>

export const IntegrationParams = Type.Object({ tenantId: Uuid(), integrationId: Uuid() })
export const ListIntegrationsQuery = Type.Object({ ...PageQuery })
export type ListIntegrationsQuery = Static<typeof ListIntegrationsQuery>
