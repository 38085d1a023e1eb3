import type { Insertable, Kysely } from 'kysely'
import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import type { Database, NewUserRow, TenantUsersTable } from '../../db/schema.js'
import { AppError } from '../../http/errors.js'
import { type Page, readPage } from '../../http/pagination.js'
import { invitationMailRow } from '../../mail/invitation-mail.js'
import { nudgeOutbox } from '../../mail/outbox-signal.js'
import { invitationLimits } from '../invitations/invitation-limits.js'
import { type IssuedInvitation, inviterName, issueInvitation } from '../invitations/invitation-token.js'
import { findTenantRoleFor, loadRoleCatalog } from '../roles/roles.service.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import { buildNewUserRow, normalizeEmail } from '../users/user-rules.js'
import { findUserByEmail, insertUserRows } from '../users/users.repository.js'
import { extensionsFor } from './extensions.js'
import { findMembership, insertMembership, listMemberships } from './memberships.repository.js'
import type { CreateTenantUserInput, ListTenantUsersQuery, TenantUser } from './memberships.schemas.js'
import { membershipNotFound, toTenantUser } from './tenant-user.js'

const READ_PERMISSIONS = ['VIEW_ALL_USERS', 'MANAGE_ALL_USERS'] as const

/**
 * Invite a user to a tenant (SPEC §4.3, §3.2; API.md §4.4). `pending` (default) records the user in the
 * tenant without mail; `invited` issues a one-time token valid for TENANTRY_INVITATION_TTL and queues
 * the e-mail in the same transaction; `accepted` makes the user a member at once, without mail. With
 * `platformRoleId`, an unknown e-mail becomes a new platform user in the same transaction.
 */
export async function createTenantUser(
  ctx: ServiceContext,
  actor: Actor,
  tenantIdParam: string,
  input: CreateTenantUserInput,
): Promise<TenantUser> {
  const access = await requireTenantPermission(ctx, actor, tenantIdParam, ['MANAGE_TENANT_ENROLLMENT'])
  const tenantId = access.tenant.id
  const role = await findTenantRoleFor(ctx, access.tenant, input.roleId)
  checkRoleCeiling(role, access.permissions)

  const now = ctx.clock.now()
  const email = normalizeEmail(input.email)
  const existing = await findUserByEmail(ctx.db, email)
  let newUser: NewUserRow | undefined
  if (!existing) {
    if (input.platformRoleId === undefined) {
      throw new AppError('user_not_found', `No platform user has the e-mail "${email}"`, {
        email: 'no such user',
      })
    }
    newUser = await newPlatformUser(ctx, actor, input, email, now)
  }
  const userId = existing?.id ?? (newUser?.id as string)

  const status = input.status ?? 'pending'
  let invitation: IssuedInvitation | undefined
  if (status === 'invited') {
    invitationLimits(ctx).checkMail(userId)
    invitation = issueInvitation(ctx)
  }
  const extensions = extensionsFor(userId, input.extensions)
  const mail = invitation && {
    facts: {
      tenantId,
      userId,
      to: email,
      tenantName: access.tenant.name,
      roleName: role.name,
      inviterName: await inviterName(ctx, actor),
      expiresAt: invitation.expiresAt.toISOString(),
    },
    token: invitation.token,
  }
  const row: Insertable<TenantUsersTable> = {
    tenant_id: tenantId,
    user_id: userId,
    role_id: role.id,
    status,
    no_password: input.noPassword ?? null,
    default_identity_provider: input.defaultIdentityProvider?.toLowerCase() ?? null,
    invitation_expiry_date: invitation?.expiresAt ?? null,
    invitation_token_hash: invitation?.tokenHash ?? null,
    invited_by: invitation ? actor.principalId : null,
    extension: extensions[0]?.value ?? '',
    extensions: JSON.stringify(extensions),
    // The active extension is chosen once the user is a member (SPEC §2.3: null while pending).
    active_extension: status === 'accepted' && extensions[0] ? JSON.stringify(extensions[0]) : null,
    supervisor_id: null,
    capacity_rule_id: null,
    session_started: null,
    session_reason: null,
    work_station_id: input.workStationId ?? '',
    client_log_level: null,
    created: now,
    created_by: actor.principalId,
    updated: now,
    updated_by: actor.principalId,
  }
  // The membership and its mail are one statement; only a new platform user needs a transaction around it.
  const insert = (db: Kysely<Database>) =>
    insertMembership(db, row, mail && invitationMailRow(ctx.keys, mail.facts, mail.token, now))
  const stored = newUser
    ? await ctx.db.transaction().execute(async (tx) => {
        await insertUserRows(tx, [newUser])
        return insert(tx)
      })
    : await insert(ctx.db)

  if (invitation) {
    invitationLimits(ctx).recordMail(userId)
    nudgeOutbox(ctx.db)
  }
  if (status === 'accepted' || newUser) ctx.access.invalidate()
  // The response is the stored row with what this request already knows: the user's names, and the
  // state of the mail it just queued — no second read.
  const user = existing ?? newUser
  return toTenantUser(
    {
      ...stored,
      email,
      first_name: user?.first_name ?? '',
      last_name: user?.last_name ?? '',
      email_status: invitation ? 'queued' : null,
    },
    now,
  )
}

/** The row of a platform user created by an invitation: the users module's rules, unchanged. */
async function newPlatformUser(
  ctx: ServiceContext,
  actor: Actor,
  input: CreateTenantUserInput,
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
      ...(input.firstName !== undefined ? { firstName: input.firstName } : {}),
      ...(input.lastName !== undefined ? { lastName: input.lastName } : {}),
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

export async function getTenantUser(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  userId: string,
): Promise<TenantUser> {
  await requireTenantPermission(ctx, actor, tenantId, READ_PERMISSIONS)
  return getMembershipRecord(ctx, tenantId, userId)
}

export async function listTenantUsers(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListTenantUsersQuery,
): Promise<Page<TenantUser>> {
  await requireTenantPermission(ctx, actor, tenantId, READ_PERMISSIONS)
  const now = ctx.clock.now()
  return readPage(
    query,
    ({ afterId, limit }) => listMemberships(ctx.db, tenantId, { afterUserId: afterId, limit }),
    (row) => row.user_id,
    (row) => toTenantUser(row, now),
  )
}

/** The record as stored now, without an access check (the caller has done it). */
export async function getMembershipRecord(
  ctx: ServiceContext,
  tenantId: string,
  userId: string,
): Promise<TenantUser> {
  const row = await findMembership(ctx.db, tenantId, userId)
  if (!row) throw membershipNotFound()
  return toTenantUser(row, ctx.clock.now())
}
