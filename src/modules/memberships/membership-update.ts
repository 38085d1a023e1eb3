import type { Transaction, Updateable } from 'kysely'
import type { Actor } from '../../access/actor.js'
import type { Permission } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import type { Database, MembershipsTable } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import type { Changes } from '../../outbox/audit-event.js'
import { recordAudit } from '../../outbox/audit-trail.js'
import { invitationMailRow } from '../../outbox/mail/invitation-mail.js'
import { deleteQueuedInvitationMail } from '../../outbox/outbox.repository.js'
import { type UnitTransaction, writeUnit } from '../../outbox/write-unit.js'
import { describeRole, findTenantRoleFor } from '../roles/roles.service.js'
import { checkDefaultIdentityProvider } from '../tenants/default-provider.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import { invitationLimits } from './invitation-limits.js'
import { type IssuedInvitation, inviterName, issueInvitation } from './invitation-token.js'
import { membershipUpdateRecord } from './membership-audit.js'
import { applyProfile, checkSupervisor } from './membership-profile.js'
import { membershipNotFound } from './membership-record.js'
import { planDirectoryMove, planStatusMove, type StatusMove } from './membership-status.js'
import {
  deleteMembership,
  findMembership,
  type MembershipRecordRow,
  updateMembershipRow,
} from './memberships.repository.js'
import type { ExtensionRecord, Membership, UpdateMembershipInput } from './memberships.schemas.js'
import { getMembershipRecord } from './memberships.service.js'

const NO_PERMISSIONS: ReadonlySet<Permission> = new Set()

/**
 * A directory's change of a membership (SCIM, docs/scim.md): its word may also move a pending or invited
 * member straight to disabled (planDirectoryMove), and its own row of the member is written in the
 * membership's transaction — `write` — with its changes folded into the membership's one event
 * (`audit`, docs/webhooks.md), so the status and the attributes are written, and audited, together or not at all.
 */
export interface DirectoryWrite {
  write(tx: Transaction<Database>): Promise<void>
  audit: readonly (readonly [action: string, changes: Changes])[]
}

/**
 * Change a membership (docs/api.md#tenant-users-and-invitations): the status moves of membership-status.ts, a role within the
 * ceiling, and the profile fields. Needs MANAGE_TENANT_ENROLLMENT in the tenant, and — docs/product.md#role-ceiling —
 * a caller cannot change a member whose current role carries permissions it does not hold itself
 * (a Supervisor cannot disable an Administrator). The update applies only if the membership has not
 * moved since it was read; a concurrent change is a 409. `directory`: SCIM's change (DirectoryWrite); /v1
 * never passes it, so /v1 keeps planStatusMove's state machine.
 */
export async function updateMembership(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  userId: string,
  input: UpdateMembershipInput,
  options: { directory?: DirectoryWrite } = {},
): Promise<Membership> {
  const { directory } = options
  const { access, current, key, roleName: currentRoleName } = await changeable(ctx, actor, tenantId, userId)
  const now = ctx.clock.now()
  const changes: MembershipChanges = { updated: now, updated_by: actor.principalId }
  let roleName = currentRoleName ?? ''
  if (input.roleId !== undefined && input.roleId.toLowerCase() !== current.role_id) {
    const role = await findTenantRoleFor(ctx, access.tenant, input.roleId)
    checkRoleCeiling(role, access.permissions)
    changes.role_id = role.id
    roleName = role.name
  }

  const plan = directory ? planDirectoryMove : planStatusMove
  const move: StatusMove = input.status === undefined ? 'none' : plan(current.status, input.status)
  const nextStatus = input.status ?? current.status
  await checkDefaultIdentityProvider(ctx.db, key.tenantId, input.defaultIdentityProvider)
  const extensions = applyProfile(changes, current, input, nextStatus)
  if (input.supervisorId) await checkSupervisor(ctx, key, input.supervisorId)
  if (move === 'invite') await invitationLimits(ctx).takeMail(current.email)
  const invitation = move === 'invite' ? issueInvitation(ctx) : undefined
  applyMove(changes, move, { current, extensions, invitation, actor })
  const mail = invitation && {
    ...key,
    to: current.email,
    tenantName: access.tenant.name,
    roleName,
    inviterName: await inviterName(ctx, actor),
    expiresAt: invitation.expiresAt.toISOString(),
  }
  await writeUnit(ctx).transaction(async (tx) => {
    await storeChange(tx, { key, current, changes, directory, move })
    const record = membershipUpdateRecord(key, current, changes, directory?.audit)
    if (record) await recordAudit(tx.db, ctx.clock, actor, record)
    // A new link's mail replaces the old link's unsent one, which would carry a dead link.
    if (mail && invitation) await tx.mail(invitationMailRow(ctx.keys, mail, invitation.token, now))
  })
  if (move !== 'none' || changes.role_id !== undefined) ctx.access.invalidate()
  return getMembershipRecord(ctx, key.tenantId, key.userId)
}

type MembershipChanges = Updateable<MembershipsTable> & { updated: Date }

/**
 * The membership a caller may change: it exists, and — docs/product.md#role-ceiling — its current role carries no
 * permission the caller lacks in the tenant. Its key as stored, and its role's name.
 */
async function changeable(ctx: ServiceContext, actor: Actor, tenantId: string, userId: string) {
  const access = await requireTenantPermission(ctx, actor, tenantId, ['MANAGE_TENANT_ENROLLMENT'])
  const current = await findMembership(ctx.db, tenantId, userId)
  if (!current) throw membershipNotFound()
  // Ids as stored (lower case), whatever case the path used: the outbox matches them as text.
  const key = { tenantId: current.tenant_id, userId: current.user_id }
  // The role as stated, even when disabled or no longer shared here: what the member would hold again.
  const currentRole = await describeRole(ctx, current.role_id)
  checkRoleCeiling(
    { name: currentRole?.name ?? current.role_id, permissions: currentRole?.permissions ?? NO_PERMISSIONS },
    access.permissions,
    'userId',
    'change a user holding',
  )
  return { access, current, key, roleName: currentRole?.name }
}

/** What a status move changes on the row. */
function applyMove(
  changes: MembershipChanges,
  move: StatusMove,
  context: {
    current: MembershipRecordRow
    extensions: readonly ExtensionRecord[]
    invitation: IssuedInvitation | undefined
    actor: Actor
  },
): void {
  const { current, extensions, invitation, actor } = context
  switch (move) {
    case 'invite':
      changes.status = 'invited'
      changes.invitation_token_hash = invitation?.tokenHash ?? null
      changes.invitation_expiry_date = invitation?.expiresAt ?? null
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
    case 'deactivate':
      // The token hash stays, so the e-mail's link can say "already accepted" rather than "unknown".
      // A directory's deactivate leaves what accept-then-disable would: the default extension active.
      changes.status = move === 'deactivate' ? 'disabled' : 'accepted'
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
}

/**
 * Writes the change in the unit's transaction, only while the membership is as it was read (else 412, or
 * 409 when it moved), with the directory's own row. A link that dies (a new one, cancelled, accepted,
 * deactivated) takes its unsent mail with it.
 */
async function storeChange(
  tx: UnitTransaction,
  change: {
    key: { tenantId: string; userId: string }
    current: MembershipRecordRow
    changes: MembershipChanges
    directory: DirectoryWrite | undefined
    move: StatusMove
  },
): Promise<void> {
  const { key, current, changes, directory, move } = change
  const expected = { status: current.status, tokenHash: current.invitation_token_hash }
  const outcome = await updateMembershipRow(tx.db, key, expected, changes)
  if (outcome === 'stale') throw preconditionFailed()
  if (outcome === 'moved') {
    throw new AppError(
      'invalid_state_transition',
      'The membership changed while this request was processed; read it again and retry',
    )
  }
  if (directory) await directory.write(tx.db)
  if (move === 'invite' || move === 'cancel' || move === 'accept' || move === 'deactivate')
    await deleteQueuedInvitationMail(tx.db, key.tenantId, key.userId)
}

/**
 * `DELETE /v1/tenants/{t}/users/{u}` (docs/product.md#offboarding-and-erasure): the membership goes (its invitation link with it, and
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
