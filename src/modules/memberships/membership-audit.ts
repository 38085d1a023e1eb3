import type { Updateable } from 'kysely'
import type { MembershipsTable } from '../../db/schema.js'
import { type AuditRecord, type Changes, recordOfChange } from '../audit/audit.repository.js'
import type { MembershipRecordRow } from './memberships.repository.js'
import type { CreateStatus } from './memberships.schemas.js'

/**
 * The event of a new membership (docs/webhooks.md): `membership.invited` when an invitation e-mail goes out,
 * `membership.created` otherwise, with the role and the status it starts with. The same record as an
 * invitation writes (memberships.service.ts `createMembership`); bulk rows naming a tenant write it too.
 * `disabled` only for a directory's create of an inactive member (SCIM `active: false`).
 */
export function membershipCreatedRecord(membership: {
  tenantId: string
  /** Null when the statement that writes the event resolves the user itself (an invitation by e-mail). */
  userId: string | null
  roleId: string
  status: CreateStatus | 'disabled'
}): AuditRecord {
  const { tenantId, userId, roleId, status } = membership
  return {
    action: status === 'invited' ? 'membership.invited' : 'membership.created',
    tenantId,
    target: { type: 'membership', id: userId },
    changes: { roleId: [null, roleId], status: [null, status] },
  }
}

/**
 * The one event of a membership's change (docs/webhooks.md: one record, one event, every field it changed),
 * named after the most telling part: a status move, else a resent invitation (a new link and window),
 * else a role change, else a profile edit, else the `alongside` groups of a write to the same record in
 * the same transaction (a directory's attributes, `scim_user.updated`). None when nothing changed.
 */
export function membershipUpdateRecord(
  key: { tenantId: string; userId: string },
  current: MembershipRecordRow,
  changes: Updateable<MembershipsTable>,
  alongside: readonly (readonly [action: string, changes: Changes])[] = [],
): AuditRecord | undefined {
  const status: Changes = {}
  if (changes.status !== undefined && changes.status !== current.status) {
    status.status = [current.status, changes.status]
  }
  const invitation: Changes = {}
  if (changes.invitation_expiry_date !== undefined) {
    const before = current.invitation_expiry_date?.toISOString() ?? null
    const after = changes.invitation_expiry_date
      ? new Date(changes.invitation_expiry_date).toISOString()
      : null
    if (before !== after) invitation.invitationExpiryDate = [before, after]
  }
  const role: Changes = {}
  if (changes.role_id !== undefined && changes.role_id !== current.role_id) {
    role.roleId = [current.role_id, changes.role_id]
  }
  const profile: Changes = {}
  const fields = {
    noPassword: ['no_password', current.no_password],
    defaultIdentityProvider: ['default_identity_provider', current.default_identity_provider],
    workStationId: ['work_station_id', current.work_station_id],
    supervisorId: ['supervisor_id', current.supervisor_id],
    extensions: ['extensions', current.extensions],
    activeExtension: ['active_extension', current.active_extension],
  } as const
  for (const [name, [column, before]] of Object.entries(fields)) {
    const raw = changes[column as keyof typeof changes]
    if (raw === undefined) continue
    const after =
      typeof raw === 'string' && (column === 'extensions' || column === 'active_extension')
        ? JSON.parse(raw)
        : raw
    if (JSON.stringify(after) !== JSON.stringify(before ?? null)) profile[name] = [before ?? null, after]
  }
  return recordOfChange({ tenantId: key.tenantId, target: { type: 'membership', id: key.userId } }, [
    ['membership.status_changed', status],
    ['membership.invited', invitation],
    ['membership.role_changed', role],
    ['membership.updated', profile],
    ...alongside,
  ])
}
