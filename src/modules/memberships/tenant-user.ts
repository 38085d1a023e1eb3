import type { Actor } from '../../access/actor.js'
import { permissionsBeyondCeiling } from '../../access/ceiling.js'
import { canSee, type TenantAccess } from '../../access/effective.js'
import type { Permission } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../http/errors.js'
import { tenantNotFound } from '../tenants/tenants.service.js'
import { toExtensionRecord } from './extensions.js'
import { invitationStatusOf } from './membership-status.js'
import type { MembershipRecordRow } from './memberships.repository.js'
import type { TenantUser } from './memberships.schemas.js'

/** What the membership operations share: access checks, the ceiling, and the API record. */

export function membershipNotFound(): AppError {
  return new AppError('user_not_found', 'This user is not a user of this tenant')
}

/**
 * The caller's access in a tenant when it holds one of `permissions` there (API.md §3); a tenant it
 * cannot see is a 404, so ids do not leak, and one it can see without the permission a 403.
 */
export async function requireTenantPermission(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  permissions: readonly Permission[],
): Promise<TenantAccess> {
  const access = await ctx.access.inTenant(actor, tenantId)
  if (!canSee(access)) throw tenantNotFound()
  if (!permissions.some((p) => access.permissions.has(p))) {
    throw new AppError('permission_denied', `${permissions.join(' or ')} is required in this tenant`)
  }
  return access
}

/** 403 role_exceeds_caller unless every permission of the role is one the caller holds in the tenant. */
export function checkRoleCeiling(
  role: { name: string; permissions: Iterable<Permission> },
  held: ReadonlySet<Permission>,
  field = 'roleId',
  what = 'assign',
): void {
  const missing = permissionsBeyondCeiling(role.permissions, held)
  if (missing.length > 0) {
    throw new AppError(
      'role_exceeds_caller',
      `Cannot ${what} the role "${role.name}": it carries permissions the caller does not hold in this tenant: ${missing.join(', ')}`,
      { [field]: 'exceeds the caller’s own permissions' },
    )
  }
}

/** The API record (an allow-list: the token hash and the inviter's id are not in it). */
export function toTenantUser(row: MembershipRecordRow, now: Date): TenantUser {
  return {
    tenantId: row.tenant_id,
    userId: row.user_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    roleId: row.role_id,
    status: row.status,
    invitationStatus: invitationStatusOf(row, now),
    invitationEmailStatus: row.email_status,
    state: row.state,
    noPassword: row.no_password,
    defaultIdentityProvider: row.default_identity_provider,
    invitationExpiryDate: row.invitation_expiry_date?.toISOString() ?? null,
    invitationToken: null,
    extension: row.extension,
    extensions: row.extensions.map(toExtensionRecord),
    activeExtension: row.active_extension ? toExtensionRecord(row.active_extension) : null,
    supervisorId: row.supervisor_id,
    capacityRuleId: row.capacity_rule_id,
    sessionStarted: row.session_started?.toISOString() ?? null,
    sessionReason: row.session_reason,
    workStationId: row.work_station_id,
    clientLogLevel: row.client_log_level,
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
  }
}
