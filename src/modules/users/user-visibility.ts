import type { Actor } from '../../access/actor.js'
import { withinCeiling } from '../../access/ceiling.js'
import type { Permission } from '../../access/permissions.js'
import type { RoleCatalog } from '../../access/role-catalog.js'
import type { ServiceContext } from '../../context.js'
import type { UserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { loadRoleCatalog } from '../roles/roles.service.js'
import { type UserScope, userInScope } from './users.repository.js'

/**
 * Who may read and who may manage which platform user. Platform users belong to no tenant, so the brief
 * leaves this open; the rule chosen:
 *
 * - Everyone may read itself.
 * - A caller whose PLATFORM role holds VIEW_ALL_USERS or MANAGE_ALL_USERS reads every user.
 * - Otherwise a caller reads the users who hold a membership (any status) in a tenant where it holds
 *   VIEW_ALL_USERS or MANAGE_ALL_USERS effectively — that tenant or a descendant of one where its accepted
 *   membership grants it (an API key: its own tenant's subtree, when its role grants it).
 * - In addition, a caller holding MANAGE_ALL_USERS or MANAGE_TENANT_ENROLLMENT anywhere may look a user up
 *   by exact e-mail (`GET /v1/users?email=`): inviting someone needs their account, which belongs to no
 *   tenant yet. It cannot list or browse them.
 * - Changing another user (or one's own role, status, telephone, external id, default tenant) needs
 *   MANAGE_ALL_USERS from the platform role, or effective in a tenant where the user is a member — and
 *   the user's current roles must be within the caller's ceiling: nobody edits, disables or demotes a user
 *   more powerful than themselves.
 * Anything not readable is a 404, so ids and e-mails do not leak.
 */

export const READ_USERS: readonly Permission[] = ['VIEW_ALL_USERS', 'MANAGE_ALL_USERS']
export const MANAGE_USERS: readonly Permission[] = ['MANAGE_ALL_USERS']
export const LOOK_UP_BY_EMAIL: readonly Permission[] = ['MANAGE_ALL_USERS', 'MANAGE_TENANT_ENROLLMENT']

const holdsAny = (held: ReadonlySet<Permission>, wanted: readonly Permission[]) =>
  wanted.some((permission) => held.has(permission))

/** The users the caller reaches through any of `permissions`; `includeSelf` adds the caller itself. */
export async function userScope(
  ctx: ServiceContext,
  actor: Actor,
  permissions: readonly Permission[],
  includeSelf: boolean,
): Promise<UserScope> {
  if (actor.kind === 'api_key') {
    return {
      all: false,
      selfId: undefined,
      subtreesOf: holdsAny(actor.permissions, permissions) ? [actor.tenantId] : [],
    }
  }
  if (holdsAny(actor.platformPermissions, permissions)) return { all: true }
  const subtreesOf: string[] = []
  for (const membership of await ctx.access.grantingMemberships(actor)) {
    if (holdsAny(membership.permissions, permissions)) subtreesOf.push(membership.tenantId)
  }
  return { all: false, selfId: includeSelf ? actor.userId : undefined, subtreesOf }
}

export function isSelf(actor: Actor, userId: string): boolean {
  return actor.kind === 'user' && actor.userId === userId
}

export async function canReadUser(ctx: ServiceContext, actor: Actor, userId: string): Promise<boolean> {
  if (isSelf(actor, userId)) return true
  return userInScope(ctx.db, userId, await userScope(ctx, actor, READ_USERS, false))
}

export async function canManageUser(ctx: ServiceContext, actor: Actor, userId: string): Promise<boolean> {
  return userInScope(ctx.db, userId, await userScope(ctx, actor, MANAGE_USERS, false))
}

/**
 * The check of an action on another user that changes no field (signing the person out everywhere,
 * docs/security.md): MANAGE_ALL_USERS over the user, and every role it holds within the caller's
 * platform-role permissions — nobody acts on a user more powerful than themselves. 403 otherwise.
 */
export async function checkMayActOnUser(
  ctx: ServiceContext,
  actor: Actor,
  target: Pick<UserRow, 'id' | 'role_id' | 'additional_role_ids'>,
): Promise<void> {
  if (!(await canManageUser(ctx, actor, target.id))) {
    throw new AppError('permission_denied', 'MANAGE_ALL_USERS over this user is required')
  }
  checkHoldsNoRoleBeyond(actor, target, await loadRoleCatalog(ctx))
}

/** Nobody edits, disables, demotes or signs out a user whose current roles exceed their own: 403 otherwise. */
export function checkHoldsNoRoleBeyond(
  actor: Actor,
  target: Pick<UserRow, 'role_id' | 'additional_role_ids'>,
  roles: RoleCatalog,
): void {
  const ceiling = platformPermissionsOf(actor)
  for (const roleId of [target.role_id, ...target.additional_role_ids]) {
    const role = roles.get(roleId)
    if (role && !withinCeiling(role.permissions, ceiling)) {
      throw new AppError(
        'role_exceeds_caller',
        `This user holds the role "${role.name}", which carries permissions the caller does not hold`,
      )
    }
  }
}

export async function canLookUpByEmail(ctx: ServiceContext, actor: Actor): Promise<boolean> {
  for (const permission of LOOK_UP_BY_EMAIL)
    if (await ctx.access.holdsAnywhere(actor, permission)) return true
  return false
}

/** The caller's platform-role permissions: the ceiling for platform roles. An API key has none. */
export function platformPermissionsOf(actor: Actor): ReadonlySet<Permission> {
  return actor.kind === 'user' ? actor.platformPermissions : new Set()
}
