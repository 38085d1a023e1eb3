import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely'
import type {
  ApiKeyScope,
  ApiKeyStatus,
  MembershipStatus,
  MfaAcceptIdp,
  MfaPolicy,
  USER_STATUSES,
} from './closed-lists.js'
import type { Defaulted, Json, Timestamp } from './column-types.js'
import type { AuditEventsTable, OutboxTable, WebhookDeliveriesTable, WebhooksTable } from './schema-events.js'
import type {
  ScimGroupMembersTable,
  ScimGroupsTable,
  ScimSettingsTable,
  ScimUsersTable,
} from './schema-scim.js'
import type {
  ConsoleSessionsTable,
  IdentityProvidersTable,
  MfaChallengesTable,
  RecoveryCodesTable,
  SsoRequestsTable,
  SsoTestsTable,
  SsoUsedAssertionsTable,
  UserFactorsTable,
  UserSessionsTable,
} from './schema-sign-in.js'

/**
 * Table types of the database, as Kysely sees them. Columns mirror migrations/ exactly. The tables of
 * signing in (schema-sign-in.ts), of events (schema-events.ts) and of SCIM (schema-scim.ts) are declared
 * beside this file and named here in the one Database; everything is exported from here, so a reader
 * imports db/schema.js.
 */
export * from './closed-lists.js'
export * from './schema-events.js'
export * from './schema-scim.js'
export * from './schema-sign-in.js'

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
