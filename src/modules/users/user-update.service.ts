import type { Updateable } from 'kysely'
import type { Actor } from '../../access/actor.js'
import { canSee } from '../../access/effective.js'
import type { ServiceContext } from '../../context.js'
import { hashPassword, verifyPassword } from '../../crypto/passwords.js'
import type { UserRow, UsersTable } from '../../db/schema.js'
import { AppError, invalidField } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { recordAudit } from '../../outbox/audit-trail.js'
import { writeUnit } from '../../outbox/write-unit.js'
import { loadRoleCatalog } from '../roles/roles.service.js'
import { checkAnAdministratorRemains, checkNotLockingOutSelf } from './lockout-guard.js'
import {
  adminName,
  preparePasswordReset,
  resetChanges,
  writePasswordReset,
} from './password-reset.service.js'
import { userUpdateRecords } from './user-audit.js'
import { changedUserFields } from './user-changes.js'
import { checkAdditionalRoles, checkPlatformRole, checkTelephone, type RoleCatalog } from './user-rules.js'
import {
  canManageUser,
  canReadUser,
  checkHoldsNoRoleBeyond,
  isSelf,
  platformPermissionsOf,
} from './user-visibility.js'
import { findUserById, isAcceptedMember, updateUser } from './users.repository.js'
import type { UpdateUserInput, User } from './users.schemas.js'
import { toUser, userNotFound, withResetMailStatus } from './users.service.js'

/** Fields a user may change on itself without MANAGE_ALL_USERS (docs/api.md#platform-users). */
const SELF_SERVICE_FIELDS = new Set(['firstName', 'lastName', 'password', 'currentPassword', 'defaultTenant'])

/**
 * A user's own default tenant must be one where its membership is accepted (docs/api.md#platform-users); an administrator
 * setting another user's needs only to see that tenant (the earlier rule). 400 on defaultTenant otherwise.
 */
async function checkDefaultTenant(ctx: ServiceContext, actor: Actor, userId: string, tenantId: string) {
  if (!isSelf(actor, userId)) {
    if (!canSee(await ctx.access.inTenant(actor, tenantId))) {
      throw invalidField('defaultTenant', 'does not exist', 'defaultTenant does not name a tenant')
    }
    return
  }
  if (!(await isAcceptedMember(ctx.db, tenantId.toLowerCase(), userId))) {
    throw invalidField(
      'defaultTenant',
      'must be a tenant where the user is an accepted member',
      'defaultTenant must name a tenant where the user’s membership is accepted',
    )
  }
}

/**
 * `PUT /v1/users/{id}`, partial (docs/api.md#platform-users). A user may change its own names and, with
 * `currentPassword`, its password. Everything else — and anything on another user — needs
 * MANAGE_ALL_USERS over that user (user-visibility.ts) and obeys the role ceiling, both for the roles
 * assigned and for the user's current roles. A password change stamps `password_changed_at`, which kills
 * every token issued before it; the hash is computed before the write, outside any transaction.
 */
export async function updateUserById(
  ctx: ServiceContext,
  actor: Actor,
  userId: string,
  input: UpdateUserInput,
): Promise<User> {
  const self = isSelf(actor, userId)
  const target = (await canReadUser(ctx, actor, userId)) ? await findUserById(ctx.db, userId) : undefined
  if (!target) throw userNotFound()

  // Clients send whole records back: a field repeating its current value is not a change (docs/api.md#platform-users).
  const fields = changedUserFields(target, input)
  const managing = !self || fields.some((field) => !SELF_SERVICE_FIELDS.has(field))
  const roles = await loadRoleCatalog(ctx)
  if (managing) await assertMayManage(ctx, actor, target, roles)
  const changes = await checkedChanges(ctx, actor, target, input, { fields, roles })
  if (input.password !== undefined) {
    await assertCurrentPassword(self, target, input.currentPassword)
    changes.password_hash = await hashPassword(input.password)
  }

  const standing = {
    status: changes.status ?? target.status,
    role_id: changes.role_id ?? target.role_id,
    additional_role_ids: changes.additional_role_ids ?? target.additional_role_ids,
  }
  checkNotLockingOutSelf(actor, target, standing, roles)

  const now = ctx.clock.now()
  if (changes.password_hash !== undefined) changes.password_changed_at = now
  // The administrator's reset (docs/api.md#passwords-and-the-existing-clients-flows): MANAGE_ALL_USERS over the user and the ceiling were checked
  // above (resetPassword is never a self-service field). The new link replaces the live one in the
  // update's own transaction, so a refused PUT (412, 404) leaves no link, and its change is in the
  // update's one event (docs/webhooks.md).
  const resetBy = input.resetPassword === true ? adminName(actor) : undefined
  const updated = await writeUnit(ctx).transaction(async (tx) => {
    const before = await findUserById(tx.db, userId)
    if (before) await checkAnAdministratorRemains(tx.db, before, standing)
    const after = await updateUser(tx.db, userId, { ...changes, updated: now, updated_by: actor.principalId })
    if (!before || !after || after === 'stale') return after
    const reset = resetBy === undefined ? undefined : preparePasswordReset(ctx, after, resetBy, now)
    if (reset) await writePasswordReset(tx, userId, reset)
    await recordAudit(
      tx.db,
      ctx.clock,
      actor,
      userUpdateRecords(before, after, reset && resetChanges(after, reset)),
    )
    return reset ? { ...after, reset_password_expiry_date: reset.expiresAt } : after
  })
  if (!updated) throw userNotFound()
  if (updated === 'stale') throw preconditionFailed()
  if (changesStanding(changes)) ctx.access.invalidate()
  return withResetMailStatus(ctx, toUser(updated))
}

/**
 * Role, status and password feed authentication and permission caches; the name is cached with the
 * credentials (the inviter's name in invitation e-mails).
 */
function changesStanding(changes: Updateable<UsersTable>): boolean {
  return Boolean(
    changes.role_id ||
      changes.additional_role_ids ||
      changes.status ||
      changes.password_hash ||
      changes.first_name !== undefined ||
      changes.last_name !== undefined,
  )
}

/** The fields the body changes, each checked: telephone, default tenant, platform roles. */
async function checkedChanges(
  ctx: ServiceContext,
  actor: Actor,
  target: UserRow,
  input: UpdateUserInput,
  { fields, roles }: { fields: readonly string[]; roles: RoleCatalog },
): Promise<Updateable<UsersTable>> {
  const changes: Updateable<UsersTable> = {}
  // Null means empty (docs/api.md#platform-users).
  if (input.firstName !== undefined) changes.first_name = input.firstName ?? ''
  if (input.lastName !== undefined) changes.last_name = input.lastName ?? ''
  if (input.externalId !== undefined) changes.external_id = input.externalId ?? ''
  if (input.personalTelephone !== undefined) {
    const telephone = checkTelephone(input.personalTelephone)
    if (telephone instanceof AppError) throw telephone
    changes.personal_telephone = telephone
  }
  if (input.defaultTenant !== undefined && fields.includes('defaultTenant')) {
    if (input.defaultTenant !== null) await checkDefaultTenant(ctx, actor, target.id, input.defaultTenant)
    changes.default_tenant = input.defaultTenant?.toLowerCase() ?? null
  }
  if (input.status !== undefined && fields.includes('status')) changes.status = input.status
  const ceiling = platformPermissionsOf(actor)
  if (input.roleId !== undefined && fields.includes('roleId')) {
    const error = checkPlatformRole(input.roleId, 'roleId', roles, ceiling)
    if (error) throw error
    changes.role_id = input.roleId.toLowerCase()
  }
  if (input.additionalRoleIds !== undefined && fields.includes('additionalRoleIds')) {
    const additional = checkAdditionalRoles(input.additionalRoleIds, roles, ceiling)
    if (additional instanceof AppError) throw additional
    changes.additional_role_ids = additional
  }
  return changes
}

async function assertMayManage(ctx: ServiceContext, actor: Actor, target: UserRow, roles: RoleCatalog) {
  if (!(await canManageUser(ctx, actor, target.id))) {
    throw new AppError(
      'permission_denied',
      isSelf(actor, target.id)
        ? 'Users may change only their own names and password; the rest needs MANAGE_ALL_USERS'
        : 'MANAGE_ALL_USERS over this user is required',
    )
  }
  checkHoldsNoRoleBeyond(actor, target, roles)
}

async function assertCurrentPassword(self: boolean, target: UserRow, currentPassword: string | undefined) {
  // An administrator resets another user's password without it; users prove who they are.
  if (!self || target.password_hash === null) return
  if (currentPassword === undefined) {
    throw invalidField('currentPassword', 'is required', 'currentPassword is required to change the password')
  }
  if (!(await verifyPassword(target.password_hash, currentPassword))) {
    throw invalidField('currentPassword', 'is not the current password')
  }
}
