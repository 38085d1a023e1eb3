/**
 * The values of the status columns, declared once: the TypeBox schemas of modules/ build their enums from
 * these lists (and so validation, the static types and the OpenAPI document), and the column types of
 * db/schema*.ts are the same lists as types. They live here, in the lowest layer that needs them, because db/ may not
 * import modules/.
 */
export const USER_STATUSES = ['enabled', 'disabled', 'pending', 'invited', 'accepted'] as const
export const MEMBERSHIP_STATUSES = ['pending', 'invited', 'accepted', 'disabled'] as const
/** An outbox row's delivery; a membership's `invitationEmailStatus` is its latest mail's. */
export const OUTBOX_STATUSES = ['queued', 'sent', 'failed'] as const
export const API_KEY_STATUSES = ['enabled', 'disabled'] as const
/** `api`: the /v1 credential; `scim`: a tenant's SCIM bearer token (docs/scim.md). */
export const API_KEY_SCOPES = ['api', 'scim'] as const
/** A test sign-in: created, its browser sent to the provider, and the provider's answer judged. */
export const SSO_TEST_STATUSES = ['pending', 'started', 'succeeded', 'failed'] as const
export type SsoTestStatus = (typeof SSO_TEST_STATUSES)[number]
/** Who made an audit event's change. */
export const AUDIT_ACTOR_TYPES = ['user', 'apiKey', 'system'] as const
/** Whether a second factor is needed (docs/security.md, "Policy"): a tenant's, and the platform roles'. */
export const MFA_POLICIES = ['optional', 'required'] as const
export type MfaPolicy = (typeof MFA_POLICIES)[number]
/** When a tenant counts a sign-in through its identity provider as a second factor (docs/security.md). */
export const MFA_ACCEPT_IDP = ['always', 'asserted'] as const
export type MfaAcceptIdp = (typeof MFA_ACCEPT_IDP)[number]
export type MembershipStatus = (typeof MEMBERSHIP_STATUSES)[number]
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number]
export type ApiKeyStatus = (typeof API_KEY_STATUSES)[number]
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]
