import { type Static, Type } from 'typebox'
import { ROLE_IDS } from '../../access/permissions.js'
import { MEMBERSHIP_STATUSES, type MembershipStatus, OUTBOX_STATUSES } from '../../db/schema.js'
import { Body, Email, Nullable, PageQuery, ShortText, Timestamp, Uuid } from '../../http/schemas.js'

/** Membership shapes — a user in a tenant, from invitation to acceptance (docs/product.md#memberships, docs/api.md#tenant-users-and-invitations; the API calls them tenant users). */

/** The derived, read-only `invitationStatus` (membership-status.ts computes it). */
export const INVITATION_STATUSES = [
  'pending',
  'invited',
  'expired',
  'enabled',
  'disabled',
  'sso-only',
] as const
export type InvitationStatus = (typeof INVITATION_STATUSES)[number]
export const MAX_EXTENSIONS = 20

/**
 * The statuses a new membership may be created with (one invitation or a bulk row); `disabled` is reached
 * only from `accepted`.
 */
export const CREATE_STATUSES = [
  'pending',
  'invited',
  'accepted',
] as const satisfies readonly MembershipStatus[]
export type CreateStatus = (typeof CREATE_STATUSES)[number]

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

export const MembershipSchema = Type.Object({
  tenantId: Uuid(),
  userId: Uuid(),
  email: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  externalId: Type.String({ description: 'The platform user’s externalId' }),
  platformStatus: Type.String({ description: 'The platform user’s status' }),
  roleId: Uuid({ description: 'The tenant role' }),
  roleName: Type.String({ description: 'The name of the membership’s role' }),
  status: Type.Enum(MEMBERSHIP_STATUSES, { type: 'string' }),
  invitationStatus: Type.Enum(INVITATION_STATUSES, {
    type: 'string',
    description:
      'Derived: pending, invited, expired (invited past its expiry), enabled (accepted), disabled, ' +
      'sso-only (accepted with noPassword true)',
  }),
  invitationEmailStatus: Nullable(
    Type.Enum(OUTBOX_STATUSES, {
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
  mfa: Type.Boolean({
    description:
      'The member has a second factor: an active authenticator app or passkey (recovery codes do not count)',
  }),
  mfaDeadline: Nullable(
    Timestamp({
      description:
        'When the tenant’s effective policy requires a second factor and this accepted member has none: when ' +
        'the member stops counting here (past: refused now) — the later of the policy’s turning on and this ' +
        'membership’s acceptance, plus the grace days. Null otherwise',
    }),
  ),
})
export type Membership = Static<typeof MembershipSchema>

export const CreateMembershipBody = Body(
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
    workStationId: Type.Optional(Nullable(ShortText({ description: 'null means ""' }))),
    extensions: Type.Optional(Extensions),
    platformRoleId: Type.Optional(
      Uuid({ description: 'Creates the platform user with this platform role when the e-mail is unknown' }),
    ),
    firstName: Type.Optional(Nullable(ShortText({ description: 'For a platform user created here' }))),
    lastName: Type.Optional(Nullable(ShortText({ description: 'For a platform user created here' }))),
  },
  {
    examples: [
      { email: 'jane.doe@acme.example', roleId: ROLE_IDS.agent, status: 'invited', noPassword: false },
    ],
  },
)
export type CreateMembershipInput = Static<typeof CreateMembershipBody>

export const UpdateMembershipBody = Body(
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
    workStationId: Type.Optional(Nullable(ShortText({ description: 'null means ""' }))),
  },
  { examples: [{ status: 'accepted', roleId: ROLE_IDS.supervisor }] },
)
export type UpdateMembershipInput = Static<typeof UpdateMembershipBody>

export const MembershipParams = Type.Object({ tenantId: Uuid(), userId: Uuid() })
export const ListMembershipsQuery = Type.Object({
  status: Type.Optional(
    Type.Enum(MEMBERSHIP_STATUSES, { type: 'string', description: 'Only memberships with this status' }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 254,
      description:
        'Search: members whose e-mail, first name, last name or full name contains this text, ignoring case',
    }),
  ),
  mfa: Type.Optional(
    Type.Boolean({
      description:
        'false: only the members without a second factor — those a policy requiring one refuses after ' +
        'their mfaDeadline; true: only those with one',
    }),
  ),
  ...PageQuery,
})
export type ListMembershipsQuery = Static<typeof ListMembershipsQuery>
