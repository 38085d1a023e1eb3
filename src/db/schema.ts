import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Table types of the database, as Kysely sees them. Columns mirror migrations/ exactly. */

type Timestamp = ColumnType<Date, Date, Date>
type Json<T> = ColumnType<T, string, string>
/** A column the database fills in when an insert leaves it out. */
type Defaulted<T> = ColumnType<T, T | undefined, T>

export interface PlatformTable {
  id: string
  name: string
  created: Timestamp
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
  permissions: string[]
  built_in: boolean
  created: Timestamp
  created_by: string | null
  updated: Timestamp
  updated_by: string | null
}

export type UserStatus = 'enabled' | 'disabled' | 'pending' | 'invited' | 'accepted'

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
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export type MembershipStatus = 'pending' | 'invited' | 'accepted' | 'disabled'

export interface Extension {
  description: Defaulted<string>
  provider: string
  region: string
  sdkVersion: string
  type: string
  value: string
}

export interface TenantUsersTable {
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
  status: 'enabled' | 'disabled'
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
  status: Generated<'queued' | 'sent' | 'failed'>
  attempts: Generated<number>
  next_attempt_at: Timestamp
  locked_until: Timestamp | null
  last_error: string | null
  created: Timestamp
  sent_at: Timestamp | null
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

export type AuditActorType = 'user' | 'apiKey' | 'system'

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
}

export interface SsoUsedAssertionsTable {
  provider_id: string
  assertion_id: string
  expires: Timestamp
}

export interface Database {
  platform: PlatformTable
  regions: RegionsTable
  roles: RolesTable
  users: UsersTable
  tenants: TenantsTable
  tenant_users: TenantUsersTable
  integrations: IntegrationsTable
  api_keys: ApiKeysTable
  outbox: OutboxTable
  audit_events: AuditEventsTable
  idempotency_keys: IdempotencyKeysTable
  identity_providers: IdentityProvidersTable
  sso_requests: SsoRequestsTable
  sso_used_assertions: SsoUsedAssertionsTable
}

export type UserRow = Selectable<UsersTable>
export type NewUserRow = Insertable<UsersTable>
export type TenantRow = Selectable<TenantsTable>
export type NewTenantRow = Insertable<TenantsTable>
export type TenantUpdate = Updateable<TenantsTable>
export type RoleRow = Selectable<RolesTable>
export type RegionRow = Selectable<RegionsTable>
export type MembershipRow = Selectable<TenantUsersTable>
export type IntegrationRow = Selectable<IntegrationsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type OutboxRow = Selectable<OutboxTable>
export type IdentityProviderRow = Selectable<IdentityProvidersTable>
