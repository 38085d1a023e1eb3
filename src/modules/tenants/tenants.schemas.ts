import { type Static, Type } from 'typebox'
import { REGIONS } from '../../access/permissions.js'
import { MFA_ACCEPT_IDP, MFA_POLICIES } from '../../db/schema.js'
import {
  Body,
  Description,
  Name,
  Nullable,
  PageQuery,
  ShortText,
  Timestamp,
  Uuid,
} from '../../http/schemas.js'
import { TIMEZONE_PATTERN } from '../regions/timezones.js'

/** Tenant shapes (docs/product.md#the-tenant-tree, docs/api.md#tenants). */

export const IDENTITY_PROVIDER_STATES = ['enabled', 'disabled', 'denied'] as const
export const CLIENT_LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'] as const

// The pattern lists every name the service accepts and no other (regions/timezones.ts): what a client
// reads in the document is exactly the check.
const Timezone = Type.String({
  maxLength: 64,
  pattern: TIMEZONE_PATTERN,
  errorMessage: 'must be an IANA time zone such as America/New_York',
  description:
    'IANA time zone, e.g. America/New_York, matched exactly (case included): one of GET /v1/timezones, or ' +
    'a backward-compatible link such as US/Eastern — the pattern lists every accepted name',
  examples: ['America/New_York'],
})
const ClientLogLevel = Nullable(Type.Enum(CLIENT_LOG_LEVELS, { type: 'string' }))
const IdentityProviderState = Type.Enum(IDENTITY_PROVIDER_STATES, { type: 'string' })

/** The second-factor policy fields (docs/security.md, "Policy"). */
const MfaPolicy = Type.Enum(MFA_POLICIES, {
  type: 'string',
  description:
    'required: members need a second factor to act here and in every sub-tenant, after their grace days; ' +
    'a sub-tenant can tighten its parent’s policy, never loosen it (see mfaPolicyEffective)',
})
const MfaGraceDays = Type.Integer({
  minimum: 0,
  maximum: 90,
  description:
    'Days a member keeps acting without a second factor, from the policy’s turning on or the membership’s ' +
    'acceptance, whichever is later',
})
const MfaAcceptIdp = Type.Enum(MFA_ACCEPT_IDP, {
  type: 'string',
  description:
    'always: a sign-in through the tenant’s identity provider counts as a second factor; asserted: only ' +
    'when the provider asserted more than one factor (OIDC amr, SAML AuthnContextClassRef)',
})

export const MfaPolicyEffectiveSchema = Type.Object(
  {
    policy: Type.Enum(MFA_POLICIES, { type: 'string' }),
    tenantId: Uuid({
      description:
        'The tenant the policy comes from: the nearest one, this tenant or an ancestor, whose policy is ' +
        'required; this tenant when none is',
    }),
    since: Nullable(Timestamp({ description: 'When that tenant turned its policy on; null when optional' })),
    graceDays: Type.Integer({ description: 'That tenant’s mfaGraceDays' }),
    acceptIdp: Type.Enum(MFA_ACCEPT_IDP, {
      type: 'string',
      description: 'asserted when this tenant or any ancestor asks for asserted MFA; always otherwise',
    }),
  },
  {
    description:
      'The policy that binds this tenant’s members: the strictest of the tenant and its ancestors. On a ' +
      'single tenant’s answer (GET, PUT, POST); lists leave it out',
  },
)
export type MfaPolicyEffective = Static<typeof MfaPolicyEffectiveSchema>

export const TenantSchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    description: Type.String(),
    regionId: Uuid(),
    parentId: Uuid({ description: 'The parent tenant, or the platform id for a root tenant' }),
    parentIds: Type.Array(Uuid(), { description: 'Every ancestor from the platform down to the parent' }),
    parent: Type.Object({ id: Uuid(), name: Type.String() }),
    childIds: Type.Array(Uuid()),
    adminUserId: Uuid(),
    createdBy: Uuid(),
    updatedBy: Uuid(),
    created: Timestamp(),
    updated: Timestamp(),
    active: Type.Boolean(),
    timezone: Type.String(),
    defaultIdentityProvider: Nullable(Type.String()),
    cxengageIdentityProvider: Type.String(),
    clientLogLevel: Nullable(Type.String()),
    outboundIntegrationId: Nullable(Type.String()),
    capacityRuleId: Nullable(Uuid()),
    mfaPolicy: MfaPolicy,
    mfaGraceDays: Type.Integer(),
    mfaAcceptIdp: MfaAcceptIdp,
    mfaPolicyEffective: Type.Optional(MfaPolicyEffectiveSchema),
  },
  {
    examples: [
      {
        id: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
        name: 'Acme Support',
        description: 'Customer support for Acme Corp.',
        regionId: REGIONS[0]!.id,
        parentId: '0193a6e0-0000-7000-8000-000000000001',
        parentIds: ['0193a6e0-0000-7000-8000-000000000001'],
        parent: { id: '0193a6e0-0000-7000-8000-000000000001', name: 'Platform' },
        childIds: [],
        adminUserId: '0193a6e0-1111-7000-8000-00000000000a',
        createdBy: '0193a6e0-1111-7000-8000-00000000000a',
        updatedBy: '0193a6e0-1111-7000-8000-00000000000a',
        created: '2026-11-22T10:15:00Z',
        updated: '2026-11-22T10:15:00Z',
        active: true,
        timezone: 'America/New_York',
        defaultIdentityProvider: null,
        cxengageIdentityProvider: 'enabled',
        clientLogLevel: null,
        outboundIntegrationId: null,
        capacityRuleId: null,
        mfaPolicy: 'required',
        mfaGraceDays: 7,
        mfaAcceptIdp: 'always',
        mfaPolicyEffective: {
          policy: 'required',
          tenantId: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
          since: '2026-11-22T10:15:00Z',
          graceDays: 7,
          acceptIdp: 'always',
        },
      },
    ],
  },
)
export type Tenant = Static<typeof TenantSchema>

export const CreateTenantBody = Body(
  {
    name: Name({ description: 'Unique across all tenants and regions (compared ignoring case and spacing)' }),
    regionId: Uuid(),
    description: Type.Optional(Nullable(Description())),
    parentId: Type.Optional(
      Nullable(
        Uuid({
          description:
            'Makes the new tenant a child of this tenant; the platform id (a root tenant’s parent.id) or null ' +
            'makes a root tenant',
        }),
      ),
    ),
    adminUserId: Type.Optional(Uuid({ description: 'Default: the caller' })),
    active: Type.Optional(Type.Boolean({ description: 'Default true' })),
    timezone: Type.Optional(Timezone),
    mfaPolicy: Type.Optional(MfaPolicy),
    mfaGraceDays: Type.Optional(MfaGraceDays),
    mfaAcceptIdp: Type.Optional(MfaAcceptIdp),
  },
  {
    examples: [
      {
        name: 'Acme Support',
        regionId: REGIONS[0]!.id,
        description: 'Customer support for Acme Corp.',
        timezone: 'America/New_York',
      },
    ],
  },
)
export type CreateTenantInput = Static<typeof CreateTenantBody>

export const UpdateTenantBody = Body(
  {
    name: Type.Optional(Name()),
    description: Type.Optional(Nullable(Description())),
    active: Type.Optional(Type.Boolean()),
    adminUserId: Type.Optional(Uuid()),
    timezone: Type.Optional(Timezone),
    cxengageIdentityProvider: Type.Optional(IdentityProviderState),
    defaultIdentityProvider: Type.Optional(Nullable(ShortText())),
    outboundIntegrationId: Type.Optional(Nullable(ShortText())),
    clientLogLevel: Type.Optional(ClientLogLevel),
    mfaPolicy: Type.Optional(MfaPolicy),
    mfaGraceDays: Type.Optional(MfaGraceDays),
    mfaAcceptIdp: Type.Optional(MfaAcceptIdp),
  },
  { examples: [{ description: 'Support for Acme Corp. and its subsidiaries', timezone: 'Europe/Dublin' }] },
)
export type UpdateTenantInput = Static<typeof UpdateTenantBody>

export const ListTenantsQuery = Type.Object({
  regionId: Type.Optional(Uuid()),
  parentId: Type.Optional(
    Uuid({
      description:
        'Only the direct children of this tenant (that the caller can read); the platform id (a root ' +
        'tenant’s parent.id) lists the root tenants',
    }),
  ),
  ...PageQuery,
})
export type ListTenantsQuery = Static<typeof ListTenantsQuery>
