import type { Updateable } from 'kysely'
import type { Actor } from '../../access/actor.js'
import { permissionsBeyondCeiling } from '../../access/ceiling.js'
import type { TenantAccess } from '../../access/effective.js'
import { BUILT_IN_ROLES, PERMISSIONS, type Permission, permissionNamed } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import { newId } from '../../crypto/uuid7.js'
import type { RoleRow, RolesTable } from '../../db/schema.js'
import { AppError, invalidField } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { ifMatchIsStale } from '../../http/request-context.js'
import { changesBetween, recordAudit } from '../audit/audit.repository.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import { displayName, tenantNameKey } from '../tenants/tenant-name.js'
import { findRole, insertRole, listHolderPermissions, updateRole } from './roles.repository.js'
import type { CreateRoleInput, Role, UpdateRoleInput } from './roles.schemas.js'
import { permissionSet, roleNotFound, toRole, visibleIn } from './roles.service.js'

/**
 * Creating and changing a tenant's own roles (docs/api.md#tenant-roles). Both need MANAGE_ALL_ROLES in the tenant, and
 * the role ceiling applies to the role itself: its permissions must all be held by the caller in that
 * tenant, so nobody writes themselves (or anyone) a role above their own. A change is refused as well
 * when the role as it stands, or anyone holding it, exceeds the caller. Every write records its audit
 * event in the same transaction and clears this process's permission caches at once; other processes
 * follow within the cache window (access/effective.ts CACHE_TTL_MS).
 */

const MANAGE_ROLES = ['MANAGE_ALL_ROLES'] as const
const AUDITED: readonly (keyof Role & string)[] = ['name', 'description', 'permissions', 'active', 'shared']
const BUILT_IN_NAME_KEYS = new Map(
  BUILT_IN_ROLES.filter((role) => role.scope === 'tenant').map((role) => [
    tenantNameKey(role.name),
    role.name,
  ]),
)

/** Permissions named by id or name → names, each once, in catalogue order; a 400 naming the entry. */
export function resolvePermissions(refs: readonly string[]): Permission[] {
  const named = new Set<Permission>()
  for (const [index, ref] of refs.entries()) {
    const permission = permissionNamed(ref.trim())
    if (!permission) throw invalidField(`permissions[${index}]`, 'is not a permission id or name')
    named.add(permission)
  }
  return PERMISSIONS.filter((permission) => named.has(permission))
}

/** A name's key, refused when it is a built-in tenant role's (those are visible in every tenant). */
function nameKeyOf(name: string): string {
  const key = tenantNameKey(name)
  const builtIn = BUILT_IN_NAME_KEYS.get(key)
  if (builtIn) {
    throw new AppError('role_name_taken', `A role named "${builtIn}" already exists (built in)`, {
      name: 'already exists',
    })
  }
  return key
}

export async function createTenantRole(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  input: CreateRoleInput,
): Promise<Role> {
  const access = await requireTenantPermission(ctx, actor, tenantId, MANAGE_ROLES)
  const name = displayName(input.name)
  const nameKey = nameKeyOf(name)
  const permissions = resolvePermissions(input.permissions)
  checkRoleCeiling({ name, permissions }, access.permissions, 'permissions', 'create')

  const now = ctx.clock.now()
  const row: RoleRow = {
    id: newId(),
    scope: 'tenant',
    tenant_id: access.tenant.id,
    name,
    name_key: nameKey,
    description: input.description ?? '',
    permissions,
    built_in: false,
    active: input.active ?? true,
    shared: input.shared ?? false,
    created: now,
    created_by: actor.principalId,
    updated: now,
    updated_by: actor.principalId,
  }
  const role = toRole(row)
  await ctx.db.transaction().execute(async (tx) => {
    await insertRole(tx, row)
    await recordAudit(tx, ctx.clock, actor, {
      action: 'role.created',
      tenantId: access.tenant.id,
      target: { type: 'role', id: row.id },
      changes: changesBetween(undefined, role, AUDITED),
    })
  })
  return role
}

export async function updateTenantRole(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  roleId: string,
  input: UpdateRoleInput,
): Promise<Role> {
  const access = await requireTenantPermission(ctx, actor, tenantId, MANAGE_ROLES)
  const current = await ownedRole(ctx, access, roleId)
  const changes = plannedChanges(current, input)
  if (Object.keys(changes).length === 0) {
    // Nothing to write; the caller still learns whether it had read the stored version.
    if (ifMatchIsStale('roles', current.updated)) throw preconditionFailed()
    return toRole(current)
  }
  await checkMayChange(ctx, current, access)
  if (changes.permissions) {
    checkRoleCeiling(
      { name: changes.name ?? current.name, permissions: permissionSet(changes.permissions) },
      access.permissions,
      'permissions',
      'give',
    )
  }

  const now = ctx.clock.now()
  const updated = await ctx.db.transaction().execute(async (tx) => {
    const row = await updateRole(tx, current.id, current.updated, {
      ...changes,
      updated: now,
      updated_by: actor.principalId,
    })
    if (row === 'stale') throw preconditionFailed()
    if (!row) {
      throw new AppError(
        'invalid_state_transition',
        'The role changed while this request was processed; read it again and retry',
      )
    }
    await recordAudit(tx, ctx.clock, actor, {
      action: 'role.updated',
      tenantId: access.tenant.id,
      target: { type: 'role', id: row.id },
      changes: changesBetween(toRole(current), toRole(row), AUDITED),
    })
    return row
  })
  // Every holder's permissions follow: at once here, within the cache window elsewhere.
  ctx.access.invalidate()
  return toRole(updated)
}

/** A tenant role the tenant owns: not a built-in one, nor one an ancestor shares with it (read-only). */
async function ownedRole(ctx: ServiceContext, access: TenantAccess, roleId: string): Promise<RoleRow> {
  const current = await findRole(ctx.db, roleId.toLowerCase())
  if (current?.scope !== 'tenant' || !visibleIn(current, access.tenant)) throw roleNotFound()
  if (current.built_in) {
    throw new AppError('role_read_only', `The built-in role "${current.name}" cannot be changed`)
  }
  if (current.tenant_id !== access.tenant.id) {
    throw new AppError(
      'role_read_only',
      `The role "${current.name}" is shared by an ancestor tenant; change it in the tenant that owns it`,
    )
  }
  return current
}

/** The columns a PUT changes; fields that repeat the stored value are not changes (docs/api.md#passwords-and-the-existing-clients-flows). */
function plannedChanges(current: RoleRow, input: UpdateRoleInput): Updateable<RolesTable> {
  const changes: Updateable<RolesTable> = {}
  if (input.name !== undefined && displayName(input.name) !== current.name) {
    changes.name = displayName(input.name)
    changes.name_key = nameKeyOf(changes.name)
  }
  if (input.description !== undefined && (input.description ?? '') !== current.description) {
    changes.description = input.description ?? ''
  }
  if (input.permissions !== undefined) {
    const permissions = resolvePermissions(input.permissions)
    if (permissions.join() !== PERMISSIONS.filter((p) => current.permissions.includes(p)).join()) {
      changes.permissions = permissions
    }
  }
  if (input.active !== undefined && input.active !== current.active) changes.active = input.active
  if (input.shared !== undefined && input.shared !== current.shared) changes.shared = input.shared
  return changes
}

/**
 * Nobody changes a role above them: the role as it stands must be within the caller's permissions in
 * the tenant, and so must everything its holders hold where they hold it (a Supervisor with
 * MANAGE_ALL_ROLES cannot strip or disable the role of a user who holds more than the Supervisor).
 */
async function checkMayChange(ctx: ServiceContext, current: RoleRow, access: TenantAccess): Promise<void> {
  checkRoleCeiling(
    { name: current.name, permissions: permissionSet(current.permissions) },
    access.permissions,
    'roleId',
    'change',
  )
  const aboveCaller = permissionsBeyondCeiling(
    permissionSet(await listHolderPermissions(ctx.db, current.id)),
    access.permissions,
  )
  if (aboveCaller.length > 0) {
    throw new AppError(
      'role_exceeds_caller',
      `Cannot change the role "${current.name}": someone holding it holds permissions the caller does not hold in this tenant: ${aboveCaller.join(', ')}`,
      { roleId: 'is held by someone above the caller' },
    )
  }
}
