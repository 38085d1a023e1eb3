import type { UserRow } from '../../db/schema.js'
import { type AuditRecord, type Changes, changesBetween, recordOfChange } from '../audit/audit.repository.js'

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

/** The personal fields of a user as they appear in audit changes; erasure (docs/product.md#offboarding-and-erasure) strips them. */
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
 * The event of one user update, holding every field it changed (the password masked) and, with `reset`,
 * the new reset link's expiry: named user.status_changed, else user.role_changed, else
 * user.password_changed, else user.password_reset_requested, else user.updated (profile fields). None
 * when nothing changed.
 */
export function userUpdateRecords(before: UserRow, after: UserRow, reset: Changes = {}): AuditRecord[] {
  const was = auditView(before)
  const now = auditView(after)
  const passwordChanged =
    after.password_hash !== before.password_hash
      ? { password: changesBetween(was, now, ['password'], ['password']) }
      : {}
  // One change to one user is one event (docs/webhooks.md), named after its most telling part.
  const record = recordOfChange({ tenantId: null, target: target(after.id) }, [
    ['user.status_changed', changesBetween(was, now, ['status'])],
    ['user.role_changed', changesBetween(was, now, ['roleId', 'additionalRoleIds'])],
    ['user.password_changed', passwordChanged.password ?? {}],
    ['user.password_reset_requested', reset],
    ['user.updated', changesBetween(was, now, PROFILE)],
  ])
  return record ? [record] : []
}
