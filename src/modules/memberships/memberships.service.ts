import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import type { NewUserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { type Page, readPage } from '../../http/pagination.js'
import { invitationMailRow } from '../../outbox/mail/invitation-mail.js'
import { writeUnit } from '../../outbox/write-unit.js'
import { auditEvent } from '../audit/audit.repository.js'
import { findTenantRoleFor, loadRoleCatalog } from '../roles/roles.service.js'
import { checkDefaultIdentityProvider } from '../tenants/default-provider.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import { userCreatedRecord } from '../users/user-audit.js'
import { buildNewUserRow, normalizeEmail } from '../users/user-rules.js'
import { findUserByEmail } from '../users/users.repository.js'
import { givenExtensions } from './extensions.js'
import { invitationLimits } from './invitation-limits.js'
import { type IssuedInvitation, inviterName, issueInvitation } from './invitation-token.js'
import { membershipCreatedRecord } from './membership-audit.js'
import type { NewMembershipByEmail } from './membership-insert.js'
import { membershipNotFound, toMembership } from './membership-record.js'
import { membershipWrite } from './membership-write.js'
import { findMemberRoles, findMembership, listMembershipRows } from './memberships.repository.js'
import type { CreateMembershipInput, ListMembershipsQuery, Membership } from './memberships.schemas.js'

const READ_PERMISSIONS = ['VIEW_ALL_USERS', 'MANAGE_ALL_USERS'] as const

/** The tenant an enrolment writes into and the role it gives, which the actor may hand out (the ceiling). */
export async function enrollmentWithRole(
  ctx: ServiceContext,
  actor: Actor,
  tenantIdParam: string,
  roleId: string,
) {
  const access = await requireTenantPermission(ctx, actor, tenantIdParam, ['MANAGE_TENANT_ENROLLMENT'])
  const role = await findTenantRoleFor(ctx, access.tenant, roleId)
  checkRoleCeiling(role, access.permissions)
  return { access, tenantId: access.tenant.id, role }
}

/**
 * What createMembership takes: /v1's body, or — from a directory only (SCIM's create with `active: false`,
 * docs/scim.md) — status `disabled`: a member created inactive, as an acceptance followed by a disable would
 * leave it, with one `membership.created` event. /v1's schema offers no such status.
 */
export type MembershipCreate = Omit<CreateMembershipInput, 'status'> & {
  status?: CreateMembershipInput['status'] | 'disabled'
}

/**
 * Invite a user to a tenant (docs/product.md#invitations, docs/api.md#tenant-users-and-invitations). `pending` (default) records the user in the
 * tenant without mail; `invited` issues a one-time token valid for TENANTRY_INVITATION_TTL and queues
 * the e-mail with the membership, counting it against the invitee's mail limit; `accepted` makes the user
 * a member at once, without mail. With `platformRoleId`, an unknown e-mail becomes a new platform user,
 * written with the membership. One write (membership-write.ts): all of it, or nothing.
 */
export async function createMembership(
  ctx: ServiceContext,
  actor: Actor,
  tenantIdParam: string,
  input: MembershipCreate,
): Promise<Membership> {
  const { access, tenantId, role } = await enrollmentWithRole(ctx, actor, tenantIdParam, input.roleId)
  const now = ctx.clock.now()
  const email = normalizeEmail(input.email)
  const status = input.status ?? 'pending'
  // Only a platformRoleId can create the user, so only then is the user looked up first; otherwise the
  // look-up is part of the write.
  const newUser =
    input.platformRoleId !== undefined && !(await findUserByEmail(ctx.db, email))
      ? await newPlatformUser(ctx, actor, input, email, now)
      : undefined
  const invitation = status === 'invited' ? issueInvitation(ctx) : undefined
  const mailFacts = invitation && {
    tenantId,
    to: email,
    tenantName: access.tenant.name,
    roleName: role.name,
    inviterName: await inviterName(ctx, actor),
    expiresAt: invitation.expiresAt.toISOString(),
  }
  await checkDefaultIdentityProvider(ctx.db, tenantId, input.defaultIdentityProvider)
  const stored = await writeUnit(ctx).insert(
    membershipWrite({
      membership: newMembershipRow(actor, { ...input, email, status }, { tenantId, role }, invitation, now),
      // The target is the invitee's id, which the statement decides.
      event: auditEvent(
        ctx.clock,
        actor,
        membershipCreatedRecord({ tenantId, userId: null, roleId: role.id, status }),
      ),
      newUser: newUser && { row: newUser, event: auditEvent(ctx.clock, actor, userCreatedRecord(newUser)) },
      mail: mailFacts && invitation && invitationMailRow(ctx.keys, mailFacts, invitation.token, now),
      mailLimit: invitation && invitationLimits(ctx).mailLimit(email),
    }),
  )
  if (!stored) {
    throw new AppError('user_not_found', `No platform user has the e-mail "${email}"`, {
      email: 'no such user',
    })
  }
  if (status === 'accepted' || status === 'disabled' || newUser) ctx.access.invalidate()
  return toMembership(stored, now, access.tenant.mfa)
}

/** The membership row a create decides, from its input (e-mail normalized) and the role checked. */
function newMembershipRow(
  actor: Actor,
  input: MembershipCreate & { status: NonNullable<MembershipCreate['status']> },
  { tenantId, role }: { tenantId: string; role: { id: string; name: string } },
  invitation: IssuedInvitation | undefined,
  now: Date,
): NewMembershipByEmail {
  return {
    email: input.email,
    tenantId,
    roleId: role.id,
    roleName: role.name,
    status: input.status,
    noPassword: input.noPassword ?? null,
    defaultIdentityProvider: input.defaultIdentityProvider?.toLowerCase() ?? null,
    invitation: invitation
      ? { expiresAt: invitation.expiresAt, tokenHash: invitation.tokenHash, invitedBy: actor.principalId }
      : null,
    extensions: givenExtensions(input.extensions),
    // The active extension is chosen once the user is a member (docs/product.md#memberships: null while pending).
    activateFirstExtension: input.status === 'accepted' || input.status === 'disabled',
    workStationId: input.workStationId ?? '',
    actorId: actor.principalId,
    now,
  }
}

/**
 * The row of a platform user created by an invitation (or a directory, directory-membership.ts): the users
 * module's rules, unchanged. Needs MANAGE_ALL_USERS.
 */
export async function newPlatformUser(
  ctx: ServiceContext,
  actor: Actor,
  input: MembershipCreate,
  email: string,
  now: Date,
): Promise<NewUserRow> {
  if (!(await ctx.access.holdsAnywhere(actor, 'MANAGE_ALL_USERS'))) {
    throw new AppError('permission_denied', 'MANAGE_ALL_USERS is required to create a platform user')
  }
  const row = buildNewUserRow(
    {
      email,
      roleId: input.platformRoleId as string,
      ...(input.firstName != null ? { firstName: input.firstName } : {}),
      ...(input.lastName != null ? { lastName: input.lastName } : {}),
    },
    {
      roles: await loadRoleCatalog(ctx),
      callerPlatformPermissions: actor.kind === 'user' ? actor.platformPermissions : new Set(),
      actorPrincipalId: actor.principalId,
      now,
    },
  )
  if (row instanceof AppError) {
    // The users rules name their field roleId; here the platform role arrives as platformRoleId.
    const attribute = row.attribute?.roleId ? { platformRoleId: row.attribute.roleId } : row.attribute
    throw new AppError(row.reason, row.message.replace(/^roleId\b/, 'platformRoleId'), attribute, row.headers)
  }
  return row
}

export async function getMembership(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  userId: string,
): Promise<Membership> {
  await requireTenantPermission(ctx, actor, tenantId, READ_PERMISSIONS)
  return getMembershipRecord(ctx, tenantId, userId)
}

export async function listMemberships(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListMembershipsQuery,
): Promise<Page<Membership>> {
  const access = await requireTenantPermission(ctx, actor, tenantId, READ_PERMISSIONS)
  const now = ctx.clock.now()
  return readPage(
    query,
    (window) =>
      listMembershipRows(ctx.db, tenantId, {
        ...window,
        status: query.status,
        search: query.q?.trim() || undefined,
        hasFactor: query.mfa,
      }),
    (row) => row.user_id,
    (row) => toMembership(row, now, access.tenant.mfa),
  )
}

/** The record as stored now, without an access check (the caller has done it). */
export async function getMembershipRecord(
  ctx: ServiceContext,
  tenantId: string,
  userId: string,
): Promise<Membership> {
  const row = await findMembership(ctx.db, tenantId, userId)
  if (!row) throw membershipNotFound()
  // The tenant's placement: read by the caller's access check just before, so a cache hit.
  const placement = await ctx.access.tenantPlacement(tenantId)
  return toMembership(row, ctx.clock.now(), placement?.mfa)
}

/** Users a read of memberRoleIds asks about at once: a group of 10,000 is ten reads. */
const MEMBERS_PER_READ = 1_000

/**
 * The role of each of `userIds` who is a member of the tenant (user id → role id; a user who is not is
 * absent), without an access check (the caller has done it): one read per thousand users, where a read
 * per user made a directory's group of 10,000 ten thousand round trips (docs/scim.md).
 */
export async function memberRoleIds(
  ctx: ServiceContext,
  tenantId: string,
  userIds: readonly string[],
): Promise<Map<string, string>> {
  const roles = new Map<string, string>()
  for (let start = 0; start < userIds.length; start += MEMBERS_PER_READ) {
    const rows = await findMemberRoles(ctx.db, tenantId, userIds.slice(start, start + MEMBERS_PER_READ))
    for (const row of rows) roles.set(row.user_id, row.role_id)
  }
  return roles
}
