import type { Actor } from '../../access/actor.js'
import { permissionsBeyondCeiling } from '../../access/ceiling.js'
import { canSee, type TenantAccess } from '../../access/effective.js'
import type { Permission } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { tenantNotFound } from './tenants.service.js'

/**
 * The two checks every tenant-owned operation makes (memberships, integrations, API keys, bulk rows),
 * spelt once.
 */

/**
 * The caller's access in a tenant when it holds one of `permissions` there (docs/product.md#permissions); a tenant it
 * cannot see is a 404, so ids do not leak, and one it can see without the permission a 403.
 */
export async function requireTenantPermission(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  permissions: readonly Permission[],
): Promise<TenantAccess> {
  const access = await ctx.access.inTenant(actor, tenantId)
  if (!canSee(access)) throw tenantNotFound()
  if (!permissions.some((p) => access.permissions.has(p))) {
    throw new AppError('permission_denied', `${permissions.join(' or ')} is required in this tenant`)
  }
  return access
}

/** 403 role_exceeds_caller unless every permission of the role is one the caller holds in the tenant. */
export function checkRoleCeiling(
  role: { name: string; permissions: Iterable<Permission> },
  held: ReadonlySet<Permission>,
  field = 'roleId',
  what = 'assign',
): void {
  const missing = permissionsBeyondCeiling(role.permissions, held)
  if (missing.length > 0) {
    throw new AppError(
      'role_exceeds_caller',
      `Cannot ${what} the role "${role.name}": it carries permissions the caller does not hold in this tenant: ${missing.join(', ')}`,
      { [field]: 'exceeds the caller’s own permissions' },
    )
  }
}
