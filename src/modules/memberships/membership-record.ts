import { type EffectiveMfaPolicy, mfaDeadline } from '../../access/mfa-policy.js'
import { AppError } from '../../errors.js'
import { toExtensionRecord } from './extensions.js'
import { invitationStatusOf } from './membership-status.js'
import type { MembershipRecordRow } from './memberships.repository.js'
import type { Membership } from './memberships.schemas.js'

/** What the membership operations share: the not-found error and the API record. */

export function membershipNotFound(): AppError {
  return new AppError('user_not_found', 'This user is not a user of this tenant')
}

/**
 * When an accepted member without a second factor stops counting in the tenant under its effective
 * policy (docs/security.md, "Policy"); null when the policy requires none, the member has a factor, or
 * the membership is not accepted (the grace starts at acceptance).
 */
function memberMfaDeadline(row: MembershipRecordRow, policy: EffectiveMfaPolicy | undefined): string | null {
  if (!policy || row.has_factor || row.status !== 'accepted') return null
  return mfaDeadline(policy, row.accepted_at ?? row.created)?.toISOString() ?? null
}

/**
 * The API record (an allow-list: the token hash and the inviter's id are not in it). `policy`: the
 * tenant's effective second-factor policy, for the member's deadline.
 */
export function toMembership(row: MembershipRecordRow, now: Date, policy?: EffectiveMfaPolicy): Membership {
  return {
    tenantId: row.tenant_id,
    userId: row.user_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    externalId: row.external_id,
    platformStatus: row.platform_status,
    roleId: row.role_id,
    roleName: row.role_name ?? '',
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
    mfa: row.has_factor === true,
    mfaDeadline: memberMfaDeadline(row, policy),
  }
}
