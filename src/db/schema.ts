import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Table types of the database, as Kysely sees them. Columns mirror migrations/ exactly. */

type Timestamp = ColumnType<Date, Date, Date>
type Json<T> = ColumnType<T, string, string>
/** A column the database fills in when an insert leaves it out. */
type Defaulted<T> = ColumnType<T, T | undefined, T>

/**
 * The values of the status columns, declared once: the TypeBox schemas of modules/ build their enums from
 * these lists (and so validation, the static types and the OpenAPI document), and the column types below
 * are the same lists as types. They live here, in the lowest layer that needs them, because db/ may not
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
/**
 * How a sign-in was won, as a token's `amr` says it (docs/security.md): a password, a one-time code, a
 * hardware or software key (passkeys), a tenant's single sign-on, a recovery code.
 */
export const AUTH_METHODS = ['pwd', 'otp', 'hwk', 'swk', 'sso', 'rec'] as const
export type AuthMethod = (typeof AUTH_METHODS)[number]
/** Whether a second factor is needed (docs/security.md, "Policy"): a tenant's, and the platform roles'. */
/** A second factor's kind and state, and what a second-factor challenge is for (migration 0019 domains). */
export const FACTOR_TYPES = ['totp', 'webauthn'] as const
export const FACTOR_STATUSES = ['pending', 'active'] as const
export const MFA_CHALLENGE_PURPOSES = [
  'sign_in',
  'step_up',
  'passkey_sign_in',
  'webauthn_registration',
] as const

export const MFA_POLICIES = ['optional', 'required'] as const
export type MfaPolicy = (typeof MFA_POLICIES)[number]
/** When a tenant counts a sign-in through its identity provider as a second factor (docs/security.md). */
export const MFA_ACCEPT_IDP = ['always', 'asserted'] as const
export type MfaAcceptIdp = (typeof MFA_ACCEPT_IDP)[number]

export interface PlatformTable {
  id: string
  name: string
  created: Timestamp
  /** Whether a platform role's permissions need a second factor (migration 0020). */
  mfa_for_platform_roles: Defaulted<MfaPolicy>
}

export interface RegionsTable {
  id: string
  name: string
  description: Defaulted<string>
}

export interface RolesTable {
  id: string
  scope: 'platform' | 'tenant'
  tenant_id: string | null
  name: string
  description: Defaulted<string>
  /** Permission names (the catalogue's); the API shows their ids. */
  permissions: string[]
  built_in: boolean
  /** A disabled role grants nothing and cannot be assigned. */
  active: Defaulted<boolean>
  /** Offered to the owning tenant's sub-tenants. */
  shared: Defaulted<boolean>
  /** The name's normalized key, unique within the owning tenant. */
  name_key: string
  created: Timestamp
  created_by: string | null
  updated: Timestamp
  updated_by: string | null
}

/** The statuses a client may set, and 'erased' (docs/product.md#offboarding-and-erasure), which only erasure writes. */
export type UserStatus = (typeof USER_STATUSES)[number] | 'erased'

export interface UsersTable {
  id: string
  email: string
  role_id: string
  additional_role_ids: ColumnType<string[], string[] | undefined, string[]>
  first_name: Defaulted<string>
  last_name: Defaulted<string>
  external_id: Defaulted<string>
  personal_telephone: string | null
  status: UserStatus
  alias_platform_user_id: ColumnType<string, never, never>
  default_tenant: string | null
  password_hash: string | null
  password_changed_at: Timestamp | null
  reset_password_expiry_date: Timestamp | null
  /** SHA-256 of the live password-reset token (migration 0004); null when there is none. */
  reset_password_token_hash: ColumnType<string | null, string | null | undefined, string | null>
  created: Timestamp
  created_by: string | null
  updated: Timestamp
  updated_by: string | null
}

export interface TenantsTable {
  id: string
  name: string
  name_key: string
  description: Defaulted<string>
  region_id: string
  parent_id: string
  parent_ids: string[]
  admin_user_id: string
  active: boolean
  timezone: string
  default_identity_provider: string | null
  cxengage_identity_provider: 'enabled' | 'disabled' | 'denied'
  client_log_level: string | null
  outbound_integration_id: string | null
  capacity_rule_id: string | null
  /** The second-factor policy (migration 0020, docs/security.md "Policy"). */
  mfa_policy: Defaulted<MfaPolicy>
  mfa_grace_days: Defaulted<number>
  mfa_accept_idp: Defaulted<MfaAcceptIdp>
  /** When `mfa_policy` was last turned to required; null while optional. */
  mfa_policy_since: ColumnType<Date | null, Date | null | undefined, Date | null>
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export type MembershipStatus = (typeof MEMBERSHIP_STATUSES)[number]
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number]
export type ApiKeyStatus = (typeof API_KEY_STATUSES)[number]
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]

export interface Extension {
  description: Defaulted<string>
  provider: string
  region: string
  sdkVersion: string
  type: string
  value: string
}

export interface MembershipsTable {
  tenant_id: string
  user_id: string
  role_id: string
  status: MembershipStatus
  state: Defaulted<'offline' | 'online'>
  no_password: boolean | null
  default_identity_provider: string | null
  invitation_expiry_date: Timestamp | null
  invitation_token_hash: string | null
  invited_by: string | null
  extension: Defaulted<string>
  extensions: ColumnType<Extension[], string | undefined, string>
  active_extension: ColumnType<Extension | null, string | null | undefined, string | null>
  supervisor_id: string | null
  capacity_rule_id: string | null
  session_started: Timestamp | null
  session_reason: string | null
  work_station_id: Defaulted<string>
  client_log_level: string | null
  /** The expiry an invitation.expired event was written for (migration 0007). */
  invitation_expiry_announced: Defaulted<Timestamp | null>
  /**
   * When an invitation or a pending membership became accepted (migration 0020's trigger); null for one
   * written accepted, whose `created` stands for it.
   */
  accepted_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export interface IntegrationsTable {
  tenant_id: string
  id: string
  type: string
  name: string
  name_key: string
  description: string | null
  active: boolean
  properties: Json<Record<string, unknown>>
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export interface ApiKeysTable {
  tenant_id: string
  id: string
  name: string
  description: Defaulted<string>
  role_id: string
  status: ApiKeyStatus
  scope: Defaulted<ApiKeyScope>
  expires_at: Timestamp | null
  secret_hash: string
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export interface OutboxTable {
  id: string
  tenant_id: string | null
  kind: string
  payload: Json<Record<string, unknown>>
  status: Generated<OutboxStatus>
  attempts: Generated<number>
  next_attempt_at: Timestamp
  locked_until: Timestamp | null
  last_error: string | null
  created: Timestamp
  sent_at: Timestamp | null
  /** Rows sharing a key (a webhook's id) go out one at a time in `seq` order. */
  ordering_key: Defaulted<string | null>
  seq: ColumnType<string, never, never>
}

export interface WebhooksTable {
  tenant_id: string
  id: string
  url: string
  events: string[]
  active: boolean
  include_sub_tenants: boolean
  secret: Json<Record<string, unknown>>
  /** The secret a rotation replaced (an envelope, like `secret`), still signing until it expires. */
  previous_secret: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>
  previous_secret_expires: ColumnType<Date | null, Date | null | undefined, Date | null>
  failing_since: Timestamp | null
  disabled_reason: string | null
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export interface WebhookDeliveriesTable {
  tenant_id: string
  webhook_id: string
  id: string
  message_id: string
  event_id: string | null
  action: string
  attempt: number
  outcome: 'succeeded' | 'failed'
  response_status: number | null
  error: string | null
  duration_ms: number
  attempted_at: Timestamp
}

export interface RateLimitCountersTable {
  key: string
  count: number
  reset_at: Timestamp
}

export interface IdempotencyKeysTable {
  actor: string
  key: string
  request_hash: string
  status_code: number
  response_headers: Json<Record<string, string>>
  response_body: string
  created: Timestamp
}

export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number]

export interface AuditEventsTable {
  id: string
  occurred: Timestamp
  actor_type: AuditActorType
  actor_id: string | null
  action: string
  tenant_id: string | null
  target_type: string
  target_id: string | null
  /** field → [before, after]; secrets and passwords only ever as "********". */
  changes: Json<Record<string, [unknown, unknown]>>
  request_id: string | null
  ip: string | null
}

export interface IdentityProvidersTable {
  id: string
  tenant_id: string
  name: string
  description: Defaulted<string>
  active: boolean
  protocol: 'saml' | 'oidc'
  email_mapping: string
  metadata_url: string | null
  metadata_xml: string | null
  issuer: string | null
  client_id: string | null
  /** A SecretEnvelope (crypto/secrets.ts); never plaintext. */
  client_secret: Json<Record<string, unknown>> | null
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export interface SsoRequestsTable {
  id: string
  provider_id: string
  kind: 'saml' | 'oidc'
  code_verifier: string | null
  nonce: string | null
  return_to: string | null
  created: Timestamp
  expires: Timestamp
  /** Set when the login is a test sign-in (sso_tests): its answer is reported, never used. */
  test_id: Defaulted<string | null>
}

/** A test sign-in of an identity provider and what the provider asserted (docs/sso.md#5-test-a-provider-before-people-depend-on-it). */
export interface SsoTestsTable {
  tenant_id: string
  provider_id: string
  id: string
  status: SsoTestStatus
  email: string | null
  name_id: string | null
  attributes: Json<Record<string, unknown>> | null
  error: string | null
  /** Whether a real sign-in with that e-mail would find an accepted membership in the tenant. */
  member_found: boolean | null
  created: Timestamp
  created_by: string
  started: Timestamp | null
  completed: Timestamp | null
  expires: Timestamp
}

export interface SsoUsedAssertionsTable {
  provider_id: string
  assertion_id: string
  expires: Timestamp
}

/** A console session (migration 0014): the platform token sealed with the secret key, found by id hash. */
export interface ConsoleSessionsTable {
  id_hash: string
  user_id: string
  /** A SecretEnvelope (crypto/secrets.ts); never plaintext. */
  token: Json<Record<string, unknown>>
  created: Timestamp
  expires: Timestamp
  /** The person as `POST /v1/login` last answered for this session, and when (migration 0018). */
  login: ColumnType<Record<string, unknown> | null, string | null, string | null>
  login_read: ColumnType<Date | null, Date | null, Date | null>
}

/** A sign-in and the tokens issued for it (migration 0017). */
export interface UserSessionsTable {
  id: string
  user_id: string
  created: Timestamp
  last_seen: Timestamp
  ip: string | null
  user_agent: string | null
  auth_methods: AuthMethod[]
  /** Null while the session is live; set only to the database's clock, `statement_timestamp()` (0017). */
  revoked_at: ColumnType<Date | null, never, Date>
  expires_at: Timestamp
}

/** A person's second factor (migration 0019): an authenticator app (TOTP) or a passkey. */
export interface UserFactorsTable {
  id: string
  user_id: string
  type: (typeof FACTOR_TYPES)[number]
  name: string
  status: (typeof FACTOR_STATUSES)[number]
  created: Timestamp
  last_used: ColumnType<Date | null, Date | null | undefined, Date | null>
  /** A SecretEnvelope (crypto/secrets.ts) of the base32 key; never plaintext. */
  totp_secret: Json<Record<string, unknown>> | null
  /** The last TOTP time step accepted: a code is taken once (RFC 6238 section 5.2). */
  totp_last_step: ColumnType<string | null, number | null | undefined, number | null>
  /** base64url of the WebAuthn credential id. */
  credential_id: string | null
  /** The credential's COSE public key. */
  public_key: Uint8Array | null
  sign_count: ColumnType<string | null, number | null | undefined, number | null>
  transports: string[] | null
  /** WebAuthn's credentialDeviceType: 'singleDevice' (a security key, amr hwk) or 'multiDevice' (swk). */
  device_type: string | null
}

/** Recovery codes (migration 0019): keyed hashes, each spent once. */
export interface RecoveryCodesTable {
  user_id: string
  code_hash: string
  created: Timestamp
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

/** A second-factor challenge (migration 0019): single use, one account and purpose, five minutes. */
export interface MfaChallengesTable {
  id: string
  token_hash: string
  user_id: string | null
  purpose: (typeof MFA_CHALLENGE_PURPOSES)[number]
  session_id: string | null
  webauthn_challenge: string | null
  /** The token lifetime the sign-in asked for, given to the token the answer earns. */
  token_ttl: number | null
  attempts: Generated<number>
  created: Timestamp
  expires_at: Timestamp
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

export interface Database {
  platform: PlatformTable
  regions: RegionsTable
  roles: RolesTable
  users: UsersTable
  tenants: TenantsTable
  tenant_users: MembershipsTable
  integrations: IntegrationsTable
  api_keys: ApiKeysTable
  outbox: OutboxTable
  audit_events: AuditEventsTable
  idempotency_keys: IdempotencyKeysTable
  rate_limit_counters: RateLimitCountersTable
  webhooks: WebhooksTable
  webhook_deliveries: WebhookDeliveriesTable
  identity_providers: IdentityProvidersTable
  sso_requests: SsoRequestsTable
  sso_used_assertions: SsoUsedAssertionsTable
  scim_settings: ScimSettingsTable
  scim_users: ScimUsersTable
  scim_groups: ScimGroupsTable
  scim_group_members: ScimGroupMembersTable
  console_sessions: ConsoleSessionsTable
  sso_tests: SsoTestsTable
  user_sessions: UserSessionsTable
  user_factors: UserFactorsTable
  recovery_codes: RecoveryCodesTable
  mfa_challenges: MfaChallengesTable
}

/** The scim module's own tables (docs/scim.md, migration 0013). */
export interface ScimSettingsTable {
  tenant_id: string
  default_role_id: string
  updated: Timestamp
  updated_by: string
}

export interface ScimUsersTable {
  tenant_id: string
  user_id: string
  user_name: string
  user_name_key: string
  email_key: string | null
  external_id: string | null
  active: boolean | null
  /** The resource as the directory sent it (JSON text on write). */
  attributes: Json<Record<string, unknown>>
  provisioned: Defaulted<boolean>
  created: Timestamp
  updated: Timestamp
  version: Defaulted<number>
}

export interface ScimGroupsTable {
  tenant_id: string
  id: string
  display_name: string
  display_name_key: string
  external_id: string | null
  role_id: string | null
  priority: Defaulted<number>
  created: Timestamp
  updated: Timestamp
  version: Defaulted<number>
}

export interface ScimGroupMembersTable {
  tenant_id: string
  group_id: string
  user_id: string
}

export type UserRow = Selectable<UsersTable>
export type NewUserRow = Insertable<UsersTable>
export type TenantRow = Selectable<TenantsTable>
export type NewTenantRow = Insertable<TenantsTable>
export type TenantUpdate = Updateable<TenantsTable>
export type RoleRow = Selectable<RolesTable>
export type MembershipRow = Selectable<MembershipsTable>
export type IntegrationRow = Selectable<IntegrationsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type OutboxRow = Selectable<OutboxTable>
export type WebhookRow = Selectable<WebhooksTable>
export type IdentityProviderRow = Selectable<IdentityProvidersTable>
export type SsoTestRow = Selectable<SsoTestsTable>
