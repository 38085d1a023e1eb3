import type { AuditRecord } from '../audit/audit.repository.js'
import type { CreateStatus } from './memberships.schemas.js'

/**
 * The event of a new membership (API.md §13): `membership.invited` when an invitation e-mail goes out,
 * `membership.created` otherwise, with the role and the status it starts with. The same record as an
 * invitation writes (memberships.service.ts `createMembership`); bulk rows naming a tenant write it too.
 */
export function membershipCreatedRecord(membership: {
  tenantId: string
  /** Null when the statement that writes the event resolves the user itself (an invitation by e-mail). */
  userId: string | null
  roleId: string
  status: CreateStatus
}): AuditRecord {
  const { tenantId, userId, roleId, status } = membership
  return {
    action: status === 'invited' ? 'membership.invited' : 'membership.created',
    tenantId,
    target: { type: 'membership', id: userId },
    changes: { roleId: [null, roleId], status: [null, status] },
  }
}
