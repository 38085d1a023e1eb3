import type { Actor } from '../../access/actor.js'
import { TtlCache } from '../../access/cache.js'
import { type AccessControl, canSee } from '../../access/effective.js'
import {
  isPermission,
  PERMISSION_DESCRIPTIONS,
  PERMISSIONS,
  type Permission,
} from '../../access/permissions.js'
import type { CatalogRole, RoleCatalog } from '../../access/role-catalog.js'
import type { ServiceContext } from '../../context.js'
import type { RoleRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { type Page, readPage } from '../../http/pagination.js'
import { tenantNotFound } from '../tenants/tenants.service.js'
import { findRole, listGlobalRoles, listRoles } from './roles.repository.js'
import type { ListRolesQuery, PermissionRecord, Role } from './roles.schemas.js'

/**
 * Roles are reference data that every caller who assigns one needs, so reading them asks for no
 * permission beyond being able to see where they apply: platform and built-in roles are readable by any
 * authenticated caller (their ids are fixed constants anyway); a tenant's own roles by whoever can see
 * that tenant. Anything else is a 404, so ids do not leak.
 */

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
  return PERMISSIONS.map((name) => ({ name, description: PERMISSION_DESCRIPTIONS[name] }))
}

export async function listPlatformRoles(ctx: ServiceContext, query: ListRolesQuery): Promise<Page<Role>> {
  return readPage(
    query,
    (window) => listRoles(ctx.db, { scope: 'platform', ...window }),
    (row) => row.id,
    toRole,
  )
}

/** The built-in tenant roles and the tenant's own (and its ancestors'), for a tenant the caller can see. */
export async function listTenantRoles(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListRolesQuery,
): Promise<Page<Role>> {
  const access = await ctx.access.inTenant(actor, tenantId)
  if (!canSee(access)) throw tenantNotFound()
  const ownerTenantIds = [access.tenant.id, ...access.tenant.parentIds]
  return readPage(
    query,
    (window) => listRoles(ctx.db, { scope: 'tenant', ownerTenantIds, ...window }),
    (row) => row.id,
    toRole,
  )
}

export async function getRole(ctx: ServiceContext, actor: Actor, roleId: string): Promise<Role> {
  const row = await findRole(ctx.db, roleId)
  if (!row) throw roleNotFound()
  if (row.tenant_id !== null && !canSee(await ctx.access.inTenant(actor, row.tenant_id))) throw roleNotFound()
  return toRole(row)
}

/**
 * A tenant role usable in `tenantId` — a built-in tenant role or one owned by the tenant or an
 * ancestor — or a 400 naming `field`.
 */
export async function findTenantRoleFor(
  ctx: ServiceContext,
  tenant: { id: string; parentIds: readonly string[] },
  roleId: string,
  field = 'roleId',
): Promise<CatalogRole> {
  const catalog = await loadRoleCatalog(ctx)
  const known = catalog.get(roleId.toLowerCase())
  const row = known ? undefined : await findRole(ctx.db, roleId)
  const role = known ?? (row ? toCatalogRole(row) : undefined)
  const usable =
    row === undefined || row.tenant_id === null || [tenant.id, ...tenant.parentIds].includes(row.tenant_id)
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
  return role
}

export function toRole(row: RoleRow): Role {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    // Catalogue order, so that responses are stable.
    permissions: PERMISSIONS.filter((p) => row.permissions.includes(p)),
    tenantId: row.tenant_id,
    builtIn: row.built_in,
    created: row.created.toISOString(),
    createdBy: row.created_by,
    updated: row.updated.toISOString(),
    updatedBy: row.updated_by,
  }
}
