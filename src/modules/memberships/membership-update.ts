import type { Updateable } from 'kysely'
import type { Actor } from '../../access/actor.js'
import type { Permission } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import type { MembershipsTable } from '../../db/schema.js'
import { AppError, invalidField } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { enqueueInvitationMail } from '../../outbox/mail/invitation-mail.js'
import { deleteQueuedInvitationMail, type NewOutboxRow } from '../../outbox/outbox.repository.js'
import { type AuditRecord, type Changes, recordAudit, recordOfChange } from '../audit/audit.repository.js'
import { describeRole, findTenantRoleFor } from '../roles/roles.service.js'
import { checkDefaultIdentityProvider } from '../sso/default-provider.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import { extensionsFor, resolveActiveExtension, toExtensionRecord } from './extensions.js'
import { invitationLimits } from './invitation-limits.js'
import { type IssuedInvitation, inviterName, issueInvitation } from './invitation-token.js'
import { membershipNotFound } from './membership-record.js'
import { planStatusMove, type StatusMove } from './membership-status.js'
import {
  deleteMembership,
  findMembership,
  isMember,
  type MembershipRecordRow,
  updateMembershipRow,
} from './memberships.repository.js'
import type { ExtensionRecord, Membership, UpdateMembershipInput } from './memberships.schemas.js'
import { getMembershipRecord } from './memberships.service.js'

const NO_PERMISSIONS: ReadonlySet<Permission> = new Set()

/**
 * Change a membership (API.md §4.4): the status moves of membership-status.ts, a role within the
 * ceiling, and the profile fields. Needs MANAGE_TENANT_ENROLLMENT in the tenant, and — brief §5 rule 1 —
 * a caller cannot change a member whose current role carries permissions it does not hold itself
 * (a Supervisor cannot disable an Administrator). The update applies only if the membership has not
 * moved since it was read; a concurrent change is a 409.
 */
export async function updateMembership(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  userId: string,
  input: UpdateMembershipInput,
): Promise<Membership> {
  const access = await requireTenantPermission(ctx, actor, tenantId, ['MANAGE_TENANT_ENROLLMENT'])
  const found = await findMembership(ctx.db, tenantId, userId)
  if (!found) throw membershipNotFound()
  const current = found
  // Ids as stored (lower case), whatever case the path used: the outbox matches them as text.
  const key = { tenantId: current.tenant_id, userId: current.user_id }
  // The role as stated, even when disabled or no longer shared here: what the member would hold again.
  const currentRole = await describeRole(ctx, current.role_id)
  const currentRoleName = currentRole?.name
  checkRoleCeiling(
    {
      name: currentRoleName ?? current.role_id,
      permissions: currentRole?.permissions ?? NO_PERMISSIONS,
    },
    access.permissions,
    'userId',
    'change a user holding',
  )

  const now = ctx.clock.now()
  const changes: Updateable<MembershipsTable> & { updated: Date } = {
    updated: now,
    updated_by: actor.principalId,
  }
  let roleName = currentRoleName ?? ''
  if (input.roleId !== undefined && input.roleId.toLowerCase() !== current.role_id) {
    const role = await findTenantRoleFor(ctx, access.tenant, input.roleId)
    checkRoleCeiling(role, access.permissions)
    changes.role_id = role.id
    roleName = role.name
  }

  const move: StatusMove = input.status === undefined ? 'none' : planStatusMove(current.status, input.status)
  const nextStatus = input.status ?? current.status
  await checkDefaultIdentityProvider(ctx.db, key.tenantId, input.defaultIdentityProvider)
  const extensions = applyProfile(changes, current, input, nextStatus)
  if (input.supervisorId) await checkSupervisor(ctx, key, input.supervisorId)

  let invitation: IssuedInvitation | undefined
  switch (move) {
    case 'invite':
      await invitationLimits(ctx).takeMail(current.email)
      invitation = issueInvitation(ctx)
      changes.status = 'invited'
      changes.invitation_token_hash = invitation.tokenHash
      changes.invitation_expiry_date = invitation.expiresAt
      changes.invited_by = actor.principalId
      break
    case 'cancel':
      changes.status = 'pending'
      changes.invitation_token_hash = null
      changes.invitation_expiry_date = null
      changes.invited_by = null
      break
    case 'accept':
    case 'enable':
      // The token hash stays, so the e-mail's link can say "already accepted" rather than "unknown".
      changes.status = 'accepted'
      if (changes.active_extension === undefined && current.active_extension === null && extensions[0]) {
        changes.active_extension = JSON.stringify(extensions[0])
        changes.extension = extensions[0].value
      }
      break
    case 'disable':
      changes.status = 'disabled'
      break
    case 'none':
      break
  }
  const inviter = invitation ? await inviterName(ctx, actor) : ''
  await ctx.outboxSignal.queueMail(now, (lease) =>
    ctx.db.transaction().execute(async (tx): Promise<NewOutboxRow | undefined> => {
      const expected = { status: current.status, tokenHash: current.invitation_token_hash }
      const outcome = await updateMembershipRow(tx, key, expected, changes)
      if (outcome === 'stale') throw preconditionFailed()
      if (outcome === 'moved') {
        throw new AppError(
          'invalid_state_transition',
          'The membership changed while this request was processed; read it again and retry',
        )
      }
      const record = membershipUpdateRecord(key, current, changes)
      if (record) await recordAudit(tx, ctx.clock, actor, record)
      if (invitation) {
        return enqueueInvitationMail(
          tx,
          ctx.keys,
          {
            ...key,
            to: current.email,
            tenantName: access.tenant.name,
            roleName,
            inviterName: inviter,
            expiresAt: invitation.expiresAt.toISOString(),
          },
          invitation.token,
          now,
          lease,
        )
      }
      if (move === 'cancel' || move === 'accept')
        await deleteQueuedInvitationMail(tx, key.tenantId, key.userId)
      return undefined
    }),
  )
  if (move !== 'none' || changes.role_id !== undefined) ctx.access.invalidate()
  return getMembershipRecord(ctx, key.tenantId, key.userId)
}

/**
 * `DELETE /v1/tenants/{t}/users/{u}` (API.md §14): the membership goes (its invitation link with it, and
 * its unsent mail); enrolment permission and the ceiling over the member's current role, as for a role
 * change.
 */
export async function removeMembership(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  userId: string,
): Promise<void> {
  const access = await requireTenantPermission(ctx, actor, tenantId, ['MANAGE_TENANT_ENROLLMENT'])
  const current = await findMembership(ctx.db, tenantId, userId)
  if (!current) throw membershipNotFound()
  // The held role as stated (even disabled): nobody removes a member holding more than they do.
  const role = await describeRole(ctx, current.role_id)
  checkRoleCeiling(
    role ?? { name: current.role_id, permissions: NO_PERMISSIONS },
    access.permissions,
    'userId',
    'remove a user holding',
  )
  await ctx.db.transaction().execute(async (tx) => {
    if (!(await deleteMembership(tx, current.tenant_id, current.user_id))) throw membershipNotFound()
    await deleteQueuedInvitationMail(tx, current.tenant_id, current.user_id)
    await recordAudit(tx, ctx.clock, actor, {
      action: 'membership.removed',
      tenantId: current.tenant_id,
      target: { type: 'membership', id: current.user_id },
      changes: { roleId: [current.role_id, null], status: [current.status, null] },
    })
  })
  ctx.access.invalidate()
}

/**
 * The one event of a membership's change (API.md §13: one record, one event, every field it changed),
 * named after the most telling part: a status move, else a resent invitation (a new link and window),
 * else a role change, else a profile edit. None when nothing changed.
 */
function membershipUpdateRecord(
  key: { tenantId: string; userId: string },
  current: MembershipRecordRow,
  changes: Updateable<MembershipsTable>,
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
  ])
}

/** The profile fields: identity provider, SSO-only, extensions, the active one, supervisor, workstation. */
function applyProfile(
  changes: Updateable<MembershipsTable>,
  current: MembershipRecordRow,
  input: UpdateMembershipInput,
  nextStatus: MembershipRecordRow['status'],
): ExtensionRecord[] {
  if (input.noPassword !== undefined) changes.no_password = input.noPassword
  if (input.defaultIdentityProvider !== undefined) {
    changes.default_identity_provider = input.defaultIdentityProvider?.toLowerCase() ?? null
  }
  if (input.workStationId !== undefined) changes.work_station_id = input.workStationId ?? ''
  if (input.supervisorId !== undefined) changes.supervisor_id = input.supervisorId?.toLowerCase() ?? null

  const extensions = input.extensions
    ? extensionsFor(current.user_id, input.extensions)
    : current.extensions.map(toExtensionRecord)
  if (input.extensions) changes.extensions = JSON.stringify(extensions)
  let active: ExtensionRecord | null = current.active_extension
    ? toExtensionRecord(current.active_extension)
    : null
  if (input.activeExtension !== undefined) {
    if (input.activeExtension !== null && nextStatus !== 'accepted' && nextStatus !== 'disabled') {
      throw invalidField('activeExtension', 'can be set once the user has accepted the invitation')
    }
    active = input.activeExtension === null ? null : resolveActiveExtension(input.activeExtension, extensions)
    changes.active_extension = active ? JSON.stringify(active) : null
  } else if (
    input.extensions &&
    active &&
    !extensions.some((e) => e.type === active?.type && e.value === active?.value)
  ) {
    // The active extension was removed from the list: fall back to the default one.
    active = extensions[0] ?? null
    changes.active_extension = active ? JSON.stringify(active) : null
  }
  if (changes.active_extension !== undefined || input.extensions) {
    changes.extension = (active ?? extensions[0])?.value ?? ''
  }
  return extensions
}

async function checkSupervisor(
  ctx: ServiceContext,
  key: { tenantId: string; userId: string },
  supervisorId: string,
): Promise<void> {
  if (supervisorId.toLowerCase() === key.userId)
    throw invalidField('supervisorId', 'cannot be the user itself')
  if (!(await isMember(ctx.db, key.tenantId, supervisorId.toLowerCase()))) {
    throw invalidField('supervisorId', 'is not a user of this tenant')
  }
}
