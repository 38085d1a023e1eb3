import { expect } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { freshTenant, insertUser, memberWithToken } from './fixtures.js'
import type { TestApp } from './test-app.js'

/**
 * The four attacks every tenant-scoped route must withstand (docs/api.md#conventions, docs/product.md#permissions), for one route:
 * - no credentials → 401 unauthorized;
 * - another tenant's id, by an Administrator of a different tenant → 404 (the tenant's own not-found:
 *   ids of tenants the caller cannot see do not leak);
 * - a member whose role lacks the route's permission → 403 permission_denied;
 * - a role above the caller's own (a Supervisor naming the Administrator role) → 403 role_exceeds_caller.
 * Each attack runs in a fresh tenant of its own, and checks that the target is still what it was.
 */
export interface SecuredRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** The route's path for a tenant, and the target made in it by `setUp` when the route needs one. */
  path: (tenantId: string, target: string) => string
  /** Makes what the route acts on in a fresh tenant (e.g. a pending membership); its id is `target`. */
  setUp?: (t: TestApp, tenantId: string, adminToken: string) => Promise<string>
  /** A body the route would accept from an Administrator. */
  body?: (target: string) => Record<string, unknown>
  /** A built-in tenant role that lacks the route's permission; omit when every built-in role holds it. */
  roleWithoutPermission?: string
  /** A body that names a role (for the ceiling check); omit when the route names no role. */
  bodyNamingRole?: (target: string, roleId: string) => Record<string, unknown>
}

export async function expectRouteSecured(t: TestApp, route: SecuredRoute): Promise<void> {
  const scene = async () => {
    const { tenant, admin } = await freshTenant(t)
    const target = route.setUp ? await route.setUp(t, tenant.id, admin.token) : ''
    return { tenant, admin, target }
  }
  const send = (path: string, token: string | undefined, body?: Record<string, unknown>) =>
    t.request(route.method, path, { ...(token ? { token } : {}), ...(body ? { body } : {}) })

  {
    const { tenant, target } = await scene()
    const response = await send(route.path(tenant.id, target), undefined, route.body?.(target))
    expect(response.status, `${route.method} without credentials`).toBe(401)
    expect(response.body.error.reason).toBe('unauthorized')
  }
  {
    const { tenant, target } = await scene()
    const stranger = (await freshTenant(t)).admin
    const response = await send(route.path(tenant.id, target), stranger.token, route.body?.(target))
    expect(response.status, `${route.method} from another tenant`).toBe(404)
    expect(response.body.error.reason).toMatch(/_not_found$/)
  }
  if (route.roleWithoutPermission) {
    const { tenant, target } = await scene()
    const caller = await memberWithToken(t, tenant.id, route.roleWithoutPermission)
    const response = await send(route.path(tenant.id, target), caller.token, route.body?.(target))
    expect(response.status, `${route.method} without the permission`).toBe(403)
    expect(response.body.error.reason).toBe('permission_denied')
  }
  if (route.bodyNamingRole) {
    const { tenant, target } = await scene()
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const body = route.bodyNamingRole(target, ROLE_IDS.administrator)
    const response = await send(route.path(tenant.id, target), supervisor.token, body)
    expect(response.status, `${route.method} naming a role above the caller`).toBe(403)
    expect(response.body.error.reason).toBe('role_exceeds_caller')
  }
}

/** A platform user with no membership anywhere: someone to invite. */
export async function stranger(t: TestApp): Promise<{ id: string; email: string }> {
  return insertUser(t.database.handle.db)
}
