import type { Actor } from '../../access/actor.js'
import { TtlCache } from '../../access/cache.js'
import { type AccessControl, canSee } from '../../access/effective.js'
import {
  isPermission,
  PERMISSION_DESCRIPTIONS,
  PERMISSION_IDS,
  PERMISSIONS,
  type Permission,
  permissionIds,
} from '../../access/permissions.js'
import type { CatalogRole, RoleCatalog } from '../../access/role-catalog.js'
import type { ServiceContext } from '../../context.js'
import type { RoleRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { type Page, readPage } from '../../http/pagination.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import { tenantNotFound } from '../tenants/tenants.service.js'
import { findRole, listGlobalRoles, listRoles } from './roles.repository.js'
import type { ListRolesQuery, PermissionRecord, Role } from './roles.schemas.js'

/**
 * Reading roles (docs/product.md#permissions, docs/api.md#tenant-roles). Platform and built-in roles are readable by any authenticated caller
 * (their ids are fixed constants anyway). A tenant's roles — the built-in ones, its own, and the shared
 * ones of its ancestors — need VIEW_ALL_ROLES or MANAGE_ALL_ROLES in that tenant; a tenant the caller
 * cannot see, or a role not visible there, is a 404, so ids do not leak. A sub-tenant's roles are never
 * visible from above it, and a tenant's unshared roles never from below.
 */

export const READ_ROLES = ['VIEW_ALL_ROLES', 'MANAGE_ALL_ROLES'] as const

export function roleNotFound(): AppError {
  return new AppError('role_not_found', 'Role not found')
}

const CATALOG_TTL_MS = 5_000

/** The cache of one application's catalogue (buildApp puts it on the context), cleared with every other permission cache. */
export function createRoleCatalogCache(access: AccessControl): TtlCache<'all', Promise<RoleCatalog>> {
  const cache = new TtlCache<'all', Promise<RoleCatalog>>(CATALOG_TTL_MS, 1)
  access.onInvalidate(() => cache.clear())
  return cache
}

/**
 * The platform roles and built-in tenant roles, for synchronous rule checks. Cached for a few seconds:
 * built-in roles never change, and the promise is shared so a burst of requests costs one query.
 */
export function loadRoleCatalog(ctx: ServiceContext): Promise<RoleCatalog> {
  const cache = ctx.roleCatalog
  const cached = cache.get('all')
  if (cached) return cached
  const loading = listGlobalRoles(ctx.db).then(
    (rows) => new Map(rows.map((row) => [row.id, toCatalogRole(row)])) as RoleCatalog,
  )
  cache.set('all', loading)
  loading.catch(() => cache.delete('all'))
  return loading
}

export function toCatalogRole(row: RoleRow): CatalogRole {
  return { id: row.id, scope: row.scope, name: row.name, permissions: permissionSet(row.permissions) }
}

export function permissionSet(names: readonly string[]): ReadonlySet<Permission> {
  return new Set(names.filter(isPermission))
}

export function listPermissions(): PermissionRecord[] {
  return PERMISSIONS.map((name) => ({
    id: PERMISSION_IDS[name],
    name,
    description: PERMISSION_DESCRIPTIONS[name],
  }))
}

/** `GET /v1/tenants/{t}/permissions`: the same catalogue, for anyone who can see the tenant. */
export async function listTenantPermissions(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
): Promise<PermissionRecord[]> {
  if (!canSee(await ctx.access.inTenant(actor, tenantId))) throw tenantNotFound()
  return listPermissions()
}

export async function listPlatformRoles(ctx: ServiceContext, query: ListRolesQuery): Promise<Page<Role>> {
  return readPage(
    query,
    (window) => listRoles(ctx.db, { scope: 'platform', ...window }),
    (row) => row.id,
    toRole,
  )
}

/** The built-in tenant roles, the tenant's own and its ancestors' shared ones. */
export async function listTenantRoles(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListRolesQuery,
): Promise<Page<Role>> {
  const access = await requireTenantPermission(ctx, actor, tenantId, READ_ROLES)
  return readPage(
    query,
    (window) =>
      listRoles(ctx.db, {
        scope: 'tenant',
        tenantId: access.tenant.id,
        sharedFromIds: access.tenant.parentIds,
        ...window,
      }),
    (row) => row.id,
    toRole,
  )
}

/** One role visible in the tenant (`GET /v1/tenants/{t}/roles/{roleId}`). */
export async function getTenantRole(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  roleId: string,
): Promise<Role> {
  const access = await requireTenantPermission(ctx, actor, tenantId, READ_ROLES)
  const row = await findRole(ctx.db, roleId.toLowerCase())
  if (row?.scope !== 'tenant' || !visibleIn(row, access.tenant)) throw roleNotFound()
  return toRole(row)
}

/** `GET /v1/roles/{id}`: a global role for anyone; a tenant's own role as its tenant's roles are read. */
export async function getRole(ctx: ServiceContext, actor: Actor, roleId: string): Promise<Role> {
  const row = await findRole(ctx.db, roleId.toLowerCase())
  if (!row) throw roleNotFound()
  if (row.tenant_id !== null) {
    const access = await ctx.access.inTenant(actor, row.tenant_id)
    if (!canSee(access) || !READ_ROLES.some((p) => access.permissions.has(p))) throw roleNotFound()
  }
  return toRole(row)
}

/** Whether a role can be seen and assigned in a tenant: global, the tenant's own, or an ancestor's shared one. */
export function visibleIn(
  row: Pick<RoleRow, 'tenant_id' | 'shared'>,
  tenant: { id: string; parentIds: readonly string[] },
): boolean {
  if (row.tenant_id === null || row.tenant_id === tenant.id) return true
  return row.shared && tenant.parentIds.includes(row.tenant_id)
}

/**
 * A role as the ceiling sees it — its name and stated permissions, whether or not it is active or usable
 * here — for judging a role someone already holds. Undefined when there is no such role.
 */
export async function describeRole(ctx: ServiceContext, roleId: string): Promise<CatalogRole | undefined> {
  const known = (await loadRoleCatalog(ctx)).get(roleId.toLowerCase())
  if (known) return known
  const row = await findRole(ctx.db, roleId.toLowerCase())
  return row && toCatalogRole(row)
}

/**
 * A tenant role assignable in `tenant` — a built-in tenant role, one the tenant owns, or a shared one of
 * an ancestor — and active, or a 400 naming `field` (docs/api.md#tenant-roles).
 */
export async function findTenantRoleFor(
  ctx: ServiceContext,
  tenant: { id: string; parentIds: readonly string[] },
  roleId: string,
  field = 'roleId',
): Promise<CatalogRole> {
  const catalog = await loadRoleCatalog(ctx)
  const known = catalog.get(roleId.toLowerCase())
  const row = known ? undefined : await findRole(ctx.db, roleId.toLowerCase())
  const role = known ?? (row ? toCatalogRole(row) : undefined)
  const usable = row === undefined || visibleIn(row, tenant)
  if (!role || !usable) {
    throw new AppError('validation_failed', `${field} does not name a role of this tenant`, {
      [field]: 'does not name a tenant role',
    })
  }
  if (role.scope !== 'tenant') {
    throw new AppError(
      'validation_failed',
      `${field} names the platform role "${role.name}"; a tenant role is required`,
      {
        [field]: 'is a platform role; a tenant role is required',
      },
    )
  }
  if (row && !row.active) {
    throw new AppError('validation_failed', `${field} names the disabled role "${role.name}"`, {
      [field]: 'is a disabled role',
    })
  }
  return role
}

export function toRole(row: RoleRow): Role {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    description: row.description,
    // Ids in catalogue order, so that responses are stable.
    permissions: permissionIds(row.permissions),
    active: row.active,
    shared: row.shared,
    builtIn: row.built_in,
    created: row.created.toISOString(),
    createdBy: row.created_by,
    updated: row.updated.toISOString(),
    updatedBy: row.updated_by,
  }
}
