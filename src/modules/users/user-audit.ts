import type { UserRow } from '../../db/schema.js'
import { type AuditRecord, changesBetween } from '../audit/audit.repository.js'

/** A user row in API field names, for the audit trail's changes. */
function auditView(row: Partial<UserRow>) {
  return {
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    externalId: row.external_id,
    personalTelephone: row.personal_telephone,
    defaultTenant: row.default_tenant,
    status: row.status,
    roleId: row.role_id,
    additionalRoleIds: row.additional_role_ids,
    password: row.password_hash ?? undefined,
  }
}

const PROFILE = [
  'email',
  'firstName',
  'lastName',
  'externalId',
  'personalTelephone',
  'defaultTenant',
] as const

/** The personal fields of a user as they appear in audit changes; erasure (§14) strips them. */
export const PERSONAL_AUDIT_FIELDS = ['email', 'firstName', 'lastName', 'externalId', 'personalTelephone']

const target = (id: string) => ({ type: 'user', id })

export function userCreatedRecord(row: Partial<UserRow> & { id: string }): AuditRecord {
  return {
    action: 'user.created',
    tenantId: null,
    target: target(row.id),
    changes: changesBetween(
      undefined,
      auditView(row),
      [...PROFILE, 'status', 'roleId', 'additionalRoleIds', 'password'],
      ['password'],
    ),
  }
}

/**
 * The events of one user update: user.updated (profile fields), user.status_changed, user.role_changed
 * and user.password_changed (masked), each only when something in it changed.
 */
export function userUpdateRecords(before: UserRow, after: UserRow): AuditRecord[] {
  const was = auditView(before)
  const now = auditView(after)
  const passwordChanged =
    after.password_hash !== before.password_hash
      ? { password: changesBetween(was, now, ['password'], ['password']) }
      : {}
  const groups: [string, ReturnType<typeof changesBetween>][] = [
    ['user.updated', changesBetween(was, now, PROFILE)],
    ['user.status_changed', changesBetween(was, now, ['status'])],
    ['user.role_changed', changesBetween(was, now, ['roleId', 'additionalRoleIds'])],
    ['user.password_changed', passwordChanged.password ?? {}],
  ]
  return groups
    .filter(([, changes]) => Object.keys(changes).length > 0)
    .map(([action, changes]) => ({ action, tenantId: null, target: target(after.id), changes }))
}
