import type { Actor } from '../../access/actor.js'
import { isPermission, PERMISSIONS, type Permission } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { findLoginUser, listAcceptedMemberships } from './auth.repository.js'
import type { Login } from './auth.schemas.js'

/**
 * The caller's identity and effective permissions (docs/api.md#authentication, `POST /v1/login`). A tenant's permissions
 * include those inherited from memberships in its ancestors and the platform role's.
 */
export async function describeLogin(
  ctx: ServiceContext,
  actor: Actor,
  hasSecondFactor: (userId: string) => Promise<boolean> = async () => false,
): Promise<Login> {
  if (actor.kind !== 'user') {
    throw new AppError('permission_denied', 'POST /v1/login describes a user; an API key has no login')
  }
  const user = await findLoginUser(ctx.db, actor.userId)
  const memberships = await listAcceptedMemberships(ctx.db, actor.userId)

  const tenants = []
  for (const m of memberships) {
    const access = await ctx.access.inTenant(actor, m.tenant_id)
    tenants.push({
      tenantId: m.tenant_id,
      tenantName: m.tenant_name,
      tenantActive: m.active,
      roleId: m.role_id,
      roleName: m.role_name,
      tenantPermissions: ordered(access?.permissions ?? new Set()),
      password: m.password_allowed,
      ssoRequired: access?.ssoRequired ?? false,
      // The tenant's second-factor policy (docs/security.md, "Policy"): whether it requires one, and when
      // this credential, won without it, stops counting here (past: it counts no more).
      mfaRequired: access?.tenant.mfa.policy === 'required',
      mfaDeadline: access?.mfaDeadline?.toISOString() ?? null,
    })
  }
  return {
    userId: user.id,
    username: user.email,
    firstName: user.first_name,
    lastName: user.last_name,
    platformRoleId: user.role_id,
    platformRoleName: user.role_name,
    platformPermissions: ordered(new Set(user.permissions.filter(isPermission))),
    authMethods: [...(actor.authMethods ?? [])],
    mfa: await hasSecondFactor(actor.userId),
    tenants,
  }
}

/** Permissions in catalogue order, so responses are stable. */
function ordered(permissions: ReadonlySet<Permission>): Permission[] {
  return PERMISSIONS.filter((p) => permissions.has(p))
}
