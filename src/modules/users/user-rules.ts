import { permissionsBeyondCeiling } from '../../access/ceiling.js'
import type { Permission } from '../../access/permissions.js'
import type { RoleCatalog } from '../../access/role-catalog.js'
import { newId } from '../../crypto/uuid7.js'
import type { NewUserRow } from '../../db/schema.js'
import { AppError, invalidField } from '../../errors.js'
import type { CreateUserInput } from './users.schemas.js'

export type { RoleCatalog } from '../../access/role-catalog.js'

/** What the rules need besides the input; gathered once per request, reused for every bulk row. */
export interface NewUserEnv {
  roles: RoleCatalog
  /** The caller's platform-role permissions: the ceiling for platform roles. An API key has none. */
  callerPlatformPermissions: ReadonlySet<Permission>
  /** Written to created_by/updated_by. */
  actorPrincipalId: string
  now: Date
  /** The new user's id; a fresh UUIDv7 when not given. */
  id?: string
}

// E.164: a +, a country code that does not start with 0, at most 15 digits in all (docs/api.md#platform-users).
const E164 = /^\+[1-9][0-9]{1,14}$/

/** The stored form of an e-mail: unique and compared case-insensitively, so stored lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

/**
 * The telephone as stored, or an error naming `field`. `""` and null both mean "none", since clients
 * that always send every field send an empty string for an unknown number.
 */
export function checkTelephone(
  value: string | null | undefined,
  field = 'personalTelephone',
): string | null | AppError {
  if (value === undefined || value === null || value === '') return null
  if (E164.test(value)) return value
  const problem = !value.startsWith('+')
    ? 'must start with + and the country code (E.164)'
    : /[^0-9]/.test(value.slice(1))
      ? 'must hold only digits after the + (E.164)'
      : value.length - 1 > 15
        ? 'must have at most 15 digits (E.164)'
        : 'must be + then 2–15 digits, not starting with 0 (E.164)'
  return invalidField(field, problem)
}

/**
 * A platform role checked for existence, scope and the role ceiling (docs/product.md#role-ceiling): its permissions must be
 * a subset of the caller's platform-role permissions. Returns the error naming `field`, or undefined.
 */
export function checkPlatformRole(
  roleId: string,
  field: string,
  roles: RoleCatalog,
  callerPlatformPermissions: ReadonlySet<Permission>,
): AppError | undefined {
  const role = roles.get(roleId.toLowerCase())
  if (!role) return invalidField(field, 'does not name a platform role', `${field} does not name a role`)
  if (role.scope !== 'platform') {
    return invalidField(
      field,
      'is a tenant role; a platform role is required',
      `${field} names the tenant role "${role.name}"; a platform role is required`,
    )
  }
  const missing = permissionsBeyondCeiling(role.permissions, callerPlatformPermissions)
  if (missing.length > 0) {
    return new AppError(
      'role_exceeds_caller',
      `The role "${role.name}" carries permissions the caller does not hold: ${missing.join(', ')}`,
      { [field]: 'exceeds the caller’s own permissions' },
    )
  }
  return undefined
}

/** additionalRoleIds without repeats, in the order given; each checked like roleId. */
export function checkAdditionalRoles(
  ids: readonly string[],
  roles: RoleCatalog,
  callerPlatformPermissions: ReadonlySet<Permission>,
): string[] | AppError {
  const seen = new Set<string>()
  for (const [index, id] of ids.entries()) {
    const error = checkPlatformRole(id, `additionalRoleIds[${index}]`, roles, callerPlatformPermissions)
    if (error) return error
    seen.add(id.toLowerCase())
  }
  return [...seen]
}

/**
 * The row for a new platform user (docs/product.md#platform-users, docs/api.md#platform-users), or the error the request gets. Pure and
 * synchronous: single creates and every bulk row go through it. Invalid input (400) is reported before
 * the ceiling (403), since it is wrong whoever sends it. Defaults: status `enabled`, externalId `""`, no
 * password, no tenant (docs/product.md#platform-users), no default tenant. `aliasPlatformUserId` is issued by the database.
 */
export function buildNewUserRow(input: CreateUserInput, env: NewUserEnv): NewUserRow | AppError {
  const telephone = checkTelephone(input.personalTelephone)
  if (telephone instanceof AppError) return telephone

  const { roles, callerPlatformPermissions } = env
  const roleError = checkPlatformRole(input.roleId, 'roleId', roles, callerPlatformPermissions)
  const additional = checkAdditionalRoles(input.additionalRoleIds ?? [], roles, callerPlatformPermissions)
  // A 400 on either field wins over a 403 on the other.
  const errors = [roleError, additional instanceof AppError ? additional : undefined].filter(
    (e): e is AppError => e !== undefined,
  )
  const firstError = errors.find((e) => e.statusCode === 400) ?? errors[0]
  if (firstError) return firstError

  return {
    id: env.id ?? newId(),
    email: normalizeEmail(input.email),
    role_id: input.roleId.toLowerCase(),
    additional_role_ids: additional as string[],
    first_name: input.firstName ?? '',
    last_name: input.lastName ?? '',
    external_id: input.externalId ?? '',
    personal_telephone: telephone,
    status: input.status ?? 'enabled',
    default_tenant: null,
    password_hash: null,
    password_changed_at: null,
    reset_password_expiry_date: null,
    reset_password_token_hash: null,
    created: env.now,
    created_by: env.actorPrincipalId,
    updated: env.now,
    updated_by: env.actorPrincipalId,
  }
}
