import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import type { UserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { type Page, readPage } from '../../http/pagination.js'
import { auditEvent } from '../../outbox/audit-event.js'
import { latestPasswordResetMailStatus } from '../../outbox/password-reset-mail.repository.js'
import { writeUnit } from '../../outbox/write-unit.js'
import { loadRoleCatalog } from '../roles/roles.service.js'
import { userCreatedRecord } from './user-audit.js'
import { buildNewUserRow, normalizeEmail } from './user-rules.js'
import {
  canLookUpByEmail,
  canReadUser,
  platformPermissionsOf,
  READ_USERS,
  userScope,
} from './user-visibility.js'
import { findUserByEmail, findUserById, listUsers, userInsert } from './users.repository.js'
import type { CreateUserInput, ListUsersQuery, User } from './users.schemas.js'

export function userNotFound(): AppError {
  return new AppError('user_not_found', 'User not found')
}

/**
 * Create one platform user (docs/product.md#platform-users, docs/api.md#platform-users). Needs MANAGE_ALL_USERS from the platform role or
 * effective in at least one tenant; the roles assigned must be platform roles within the caller's
 * platform-role permissions (an API key has none, so it can assign only a role with no permission).
 * One INSERT; the e-mail's unique index settles races.
 */
export async function createUser(ctx: ServiceContext, actor: Actor, input: CreateUserInput): Promise<User> {
  if (!(await ctx.access.holdsAnywhere(actor, 'MANAGE_ALL_USERS'))) {
    throw new AppError('permission_denied', 'MANAGE_ALL_USERS is required to create platform users')
  }
  const row = buildNewUserRow(input, {
    roles: await loadRoleCatalog(ctx),
    callerPlatformPermissions: platformPermissionsOf(actor),
    actorPrincipalId: actor.principalId,
    now: ctx.clock.now(),
  })
  if (row instanceof AppError) throw row
  const event = auditEvent(ctx.clock, actor, userCreatedRecord(row))
  const stored = await writeUnit(ctx).insert(userInsert(row, event))
  return toUser(stored)
}

export async function getUser(ctx: ServiceContext, actor: Actor, userId: string): Promise<User> {
  if (!(await canReadUser(ctx, actor, userId))) throw userNotFound()
  const row = await findUserById(ctx.db, userId)
  if (!row) throw userNotFound()
  return toUser(row)
}

/** A record made from a row without the mail's state (an update's RETURNING) gets it here. */
export async function withResetMailStatus(ctx: ServiceContext, user: User): Promise<User> {
  const status =
    user.resetPasswordExpiryDate === null ? undefined : await latestPasswordResetMailStatus(ctx.db, user.id)
  return { ...user, resetPasswordEmailStatus: status ?? null }
}

/**
 * `GET /v1/users`: the users the caller can read (user-visibility.ts), or with `?email=` the one user with
 * that e-mail — 404 when there is none the caller may see (existing clients rely on the 404).
 */
export async function listVisibleUsers(
  ctx: ServiceContext,
  actor: Actor,
  query: ListUsersQuery,
): Promise<Page<User>> {
  const scope = await userScope(ctx, actor, READ_USERS, true)
  if (query.email !== undefined) {
    const email = normalizeEmail(query.email)
    let [row] = await listUsers(ctx.db, { scope, email })
    if (!row && (await canLookUpByEmail(ctx, actor))) row = await findUserByEmail(ctx.db, email)
    if (!row) throw userNotFound()
    return { items: [toUser(row)], nextCursor: undefined }
  }
  return readPage(
    query,
    (window) => listUsers(ctx.db, { scope, search: query.q?.trim() || undefined, ...window }),
    (row) => row.id,
    toUser,
  )
}

/** The API record of a stored user: an allow-list, so the password hash cannot leak. */
export function toUser(row: UserRow & { reset_mail_status?: string | null }): User {
  return {
    id: row.id,
    // An erased person (docs/product.md#offboarding-and-erasure) keeps only its id and status; the column holds a placeholder.
    email: row.status === 'erased' ? '' : row.email,
    roleId: row.role_id,
    additionalRoleIds: row.additional_role_ids,
    firstName: row.first_name,
    lastName: row.last_name,
    externalId: row.external_id,
    personalTelephone: row.personal_telephone,
    status: row.status,
    aliasPlatformUserId: String(row.alias_platform_user_id),
    defaultTenant: row.default_tenant,
    hasPassword: row.password_hash !== null,
    resetPasswordExpiryDate: row.reset_password_expiry_date?.toISOString() ?? null,
    // A row read without it (a new user, a bulk row) has no live reset link, hence no mail.
    resetPasswordEmailStatus: row.reset_mail_status ?? null,
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
  }
}
