import type { Defaulted, Json, Timestamp } from './column-types.js'

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
