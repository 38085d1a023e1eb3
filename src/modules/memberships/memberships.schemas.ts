import { type Static, Type } from 'typebox'
import { ROLE_IDS } from '../../access/permissions.js'
import { Body, Email, Nullable, PageQuery, ShortText, Timestamp, Uuid } from '../../http/schemas.js'

/** Tenant user shapes: invitations and memberships (SPEC §2.3, API.md §4.4). */

export const MEMBERSHIP_STATUSES = ['pending', 'invited', 'accepted', 'disabled'] as const
export const INVITATION_STATUSES = [
  'pending',
  'invited',
  'expired',
  'enabled',
  'disabled',
  'sso-only',
] as const
export const EMAIL_STATUSES = ['queued', 'sent', 'failed'] as const
export const MAX_EXTENSIONS = 20

/** The statuses a create may ask for; `disabled` is reached only from `accepted`. */
const CREATE_STATUSES = ['pending', 'invited', 'accepted'] as const

const ExtensionText = (description: string) => ShortText({ description })

export const ExtensionSchema = Type.Object({
  description: Type.String(),
  provider: Type.String(),
  region: Type.String(),
  sdkVersion: Type.String(),
  type: Type.String(),
  value: Type.String(),
})
export type ExtensionRecord = Static<typeof ExtensionSchema>

/** An extension as a client sends it: `type` and `value` are required, the rest default to "". */
export const ExtensionInput = Type.Object(
  {
    type: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[^\\u0000-\\u001F\\u007F]*$',
      errorMessage: 'must be 1–64 characters without control characters',
      description: 'e.g. webrtc, pstn, sip',
    }),
    value: ShortText({ description: 'The number, SIP address or client id that rings' }),
    provider: Type.Optional(ExtensionText('Telephony provider')),
    region: Type.Optional(ExtensionText('Provider region')),
    sdkVersion: Type.Optional(ExtensionText('Client SDK version')),
    description: Type.Optional(ExtensionText('Free text')),
  },
  { additionalProperties: false },
)
export type ExtensionInput = Static<typeof ExtensionInput>

const Extensions = Type.Array(ExtensionInput, {
  maxItems: MAX_EXTENSIONS,
  description: 'A default webrtc extension is added when none of type webrtc is given',
})

export const TenantUserSchema = Type.Object(
  {
    tenantId: Uuid(),
    userId: Uuid(),
    email: Type.String(),
    firstName: Type.String(),
    lastName: Type.String(),
    roleId: Uuid({ description: 'The tenant role' }),
    status: Type.Enum(MEMBERSHIP_STATUSES, { type: 'string' }),
    invitationStatus: Type.Enum(INVITATION_STATUSES, {
      type: 'string',
      description:
        'Derived: pending, invited, expired (invited past its expiry), enabled (accepted), disabled, ' +
        'sso-only (accepted with noPassword true)',
    }),
    invitationEmailStatus: Nullable(
      Type.Enum(EMAIL_STATUSES, {
        type: 'string',
        description: 'Delivery of the latest invitation e-mail; null when none was sent',
      }),
    ),
    state: Type.String({ description: 'offline | online' }),
    noPassword: Nullable(Type.Boolean()),
    defaultIdentityProvider: Nullable(Uuid()),
    invitationExpiryDate: Nullable(Timestamp()),
    invitationToken: Type.Null({ description: 'Always null: the token is only ever in the e-mail' }),
    extension: Type.String({ description: 'The value of the active (or default) extension' }),
    extensions: Type.Array(ExtensionSchema),
    activeExtension: Nullable(ExtensionSchema),
    supervisorId: Nullable(Uuid()),
    capacityRuleId: Nullable(Uuid()),
    sessionStarted: Nullable(Timestamp()),
    sessionReason: Nullable(Type.String()),
    workStationId: Type.String(),
    clientLogLevel: Nullable(Type.String()),
    createdBy: Uuid(),
    updatedBy: Uuid(),
    created: Timestamp(),
    updated: Timestamp(),
  },
  {
    examples: [
      {
        tenantId: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
        userId: '0193a6f2-5d3a-7b4c-8d2e-1f0a9b8c7d6e',
        email: 'jane.doe@acme.example',
        firstName: 'Jane',
        lastName: 'Doe',
        roleId: ROLE_IDS.agent,
        status: 'invited',
        invitationStatus: 'invited',
        invitationEmailStatus: 'sent',
        state: 'offline',
        noPassword: null,
        defaultIdentityProvider: null,
        invitationExpiryDate: '2026-11-23T10:15:00Z',
        invitationToken: null,
        extension: '0193a6f2-5d3a-7b4c-8d2e-1f0a9b8c7d6e',
        extensions: [
          {
            description: 'Default webrtc extension',
            provider: '',
            region: '',
            sdkVersion: '',
            type: 'webrtc',
            value: '0193a6f2-5d3a-7b4c-8d2e-1f0a9b8c7d6e',
          },
        ],
        activeExtension: null,
        supervisorId: null,
        capacityRuleId: null,
        sessionStarted: null,
        sessionReason: null,
        workStationId: '',
        clientLogLevel: null,
        createdBy: '0193a6e0-1111-7000-8000-00000000000a',
        updatedBy: '0193a6e0-1111-7000-8000-00000000000a',
        created: '2026-11-22T10:15:00Z',
        updated: '2026-11-22T10:15:00Z',
      },
    ],
  },
)
export type TenantUser = Static<typeof TenantUserSchema>

export const CreateTenantUserBody = Body(
  {
    email: Email(),
    roleId: Uuid({ description: 'A tenant role usable in this tenant, within the caller’s permissions' }),
    status: Type.Optional(
      Type.Enum(CREATE_STATUSES, {
        type: 'string',
        description: 'pending (default, no e-mail) | invited (token and e-mail) | accepted (member at once)',
      }),
    ),
    noPassword: Type.Optional(Nullable(Type.Boolean())),
    defaultIdentityProvider: Type.Optional(Nullable(Uuid())),
    workStationId: Type.Optional(ShortText()),
    extensions: Type.Optional(Extensions),
    platformRoleId: Type.Optional(
      Uuid({ description: 'Creates the platform user with this platform role when the e-mail is unknown' }),
    ),
    firstName: Type.Optional(ShortText({ description: 'For a platform user created here' })),
    lastName: Type.Optional(ShortText({ description: 'For a platform user created here' })),
  },
  {
    examples: [
      {
        email: 'jane.doe@acme.example',
        roleId: ROLE_IDS.agent,
        status: 'invited',
        platformRoleId: ROLE_IDS.platformUser,
        firstName: 'Jane',
        lastName: 'Doe',
        extensions: [{ type: 'pstn', value: '+15555550123', provider: 'twilio', description: 'Desk phone' }],
      },
    ],
  },
)
export type CreateTenantUserInput = Static<typeof CreateTenantUserBody>

export const UpdateTenantUserBody = Body(
  {
    status: Type.Optional(
      Type.Enum(MEMBERSHIP_STATUSES, {
        type: 'string',
        description:
          'invited: send or resend; pending: cancel the invitation; accepted: accept or re-enable; ' +
          'disabled: suspend an accepted membership',
      }),
    ),
    roleId: Type.Optional(Uuid()),
    noPassword: Type.Optional(Nullable(Type.Boolean())),
    defaultIdentityProvider: Type.Optional(Nullable(Uuid())),
    extensions: Type.Optional(Extensions),
    activeExtension: Type.Optional(
      Nullable(
        Type.Union([ExtensionInput, ShortText()], {
          errorMessage: 'must be one of the user’s extensions, or the value of one',
        }),
      ),
    ),
    supervisorId: Type.Optional(Nullable(Uuid())),
    workStationId: Type.Optional(ShortText()),
  },
  { examples: [{ roleId: ROLE_IDS.supervisor, supervisorId: null, workStationId: 'desk-4-12' }] },
)
export type UpdateTenantUserInput = Static<typeof UpdateTenantUserBody>

export const TenantUserParams = Type.Object({ tenantId: Uuid(), userId: Uuid() })
export const ListTenantUsersQuery = Type.Object({ ...PageQuery })
export type ListTenantUsersQuery = Static<typeof ListTenantUsersQuery>
