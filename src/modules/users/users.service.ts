import type { UserRow } from '../../db/schema.js'
import type { User } from './users.schemas.js'

/** The API record of a stored user: an allow-list, so the password hash cannot leak. */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    roleId: row.role_id,
    additionalRoleIds: row.additional_role_ids,
    firstName: row.first_name,
    lastName: row.last_name,
    externalId: row.external_id,
    personalTelephone: row.personal_telephone,
    status: row.status,
    aliasPlatformUserId: String(row.alias_platform_user_id),
    defaultTenant: row.default_tenant,
    hasPassword: row.password_hash !== null,
    resetPasswordExpiryDate: row.reset_password_expiry_date?.toISOString() ?? null,
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
  }
}
