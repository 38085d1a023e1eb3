import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertUser, memberWithToken } from '../../helpers/fixtures.js'
import { expectRouteSecured, stranger } from '../../helpers/security-checks.js'
import { type TestApp, useTestApp } from '../../helpers/test-app.js'

/**
 * Memberships (docs/api.md#tenant-users-and-invitations): who may invite, read and change them (docs/product.md#permissions). Every route withstands
 * the four attacks of helpers/security-checks.ts; the rules of the role ceiling and of tenant
 * visibility follow.
 */
const t = useTestApp()
let token: string
let tenant: { id: string; name: string }

beforeAll(async () => {
  token = await t.adminToken()
})
// Fixture users get a password_changed_at from the wall clock; keep the app's clock from lagging behind it.
beforeEach(() => t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime()))))
// Each test works in a tenant of its own.
beforeEach(async () => {
  tenant = await createTenantAsAdmin(t)
})

function invite(tenantId: string, body: Record<string, unknown>, as = token) {
  return t.request('POST', `/v1/tenants/${tenantId}/users`, {
    token: as,
    body: { roleId: ROLE_IDS.agent, ...body },
  })
}

function update(tenantId: string, userId: string, body: Record<string, unknown>, as = token) {
  return t.request('PUT', `/v1/tenants/${tenantId}/users/${userId}`, { token: as, body })
}

/** A pending membership of a new platform user in the tenant; its user id. */
async function pendingMember(_t: TestApp, tenantId: string, adminToken: string): Promise<string> {
  const user = await stranger(t)
  const response = await invite(tenantId, { email: user.email }, adminToken)
  expect(response.status).toBe(201)
  return user.id
}

describe('every membership route withstands the four attacks', () => {
  it('POST /v1/tenants/{tenantId}/users', async () => {
    await expectRouteSecured(t, {
      method: 'POST',
      path: (tenantId) => `/v1/tenants/${tenantId}/users`,
      setUp: async () => (await stranger(t)).email,
      body: (email) => ({ email, roleId: ROLE_IDS.agent }),
      roleWithoutPermission: ROLE_IDS.agent,
      bodyNamingRole: (email, roleId) => ({ email, roleId }),
    })
  })

  it('GET /v1/tenants/{tenantId}/users', async () => {
    // Every built-in tenant role may read its tenant's users (VIEW_ALL_USERS): no 403 case among them.
    await expectRouteSecured(t, { method: 'GET', path: (tenantId) => `/v1/tenants/${tenantId}/users` })
  })

  it('GET /v1/tenants/{tenantId}/users/{userId}', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: (tenantId, userId) => `/v1/tenants/${tenantId}/users/${userId}`,
      setUp: pendingMember,
    })
  })

  it('PUT /v1/tenants/{tenantId}/users/{userId}', async () => {
    await expectRouteSecured(t, {
      method: 'PUT',
      path: (tenantId, userId) => `/v1/tenants/${tenantId}/users/${userId}`,
      setUp: pendingMember,
      body: () => ({ status: 'invited' }),
      roleWithoutPermission: ROLE_IDS.agent,
      bodyNamingRole: (_userId, roleId) => ({ roleId }),
    })
  })

  it('DELETE /v1/tenants/{tenantId}/users/{userId}', async () => {
    await expectRouteSecured(t, {
      method: 'DELETE',
      path: (tenantId, userId) => `/v1/tenants/${tenantId}/users/${userId}`,
      setUp: pendingMember,
      roleWithoutPermission: ROLE_IDS.agent,
    })
  })
})

describe('who may invite (docs/product.md#permissions)', () => {
  it('lets a tenant Administrator invite into its tenant and its sub-tenants', async () => {
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const child = await createTenantAsAdmin(t, { parentId: tenant.id })
    const grandchild = await createTenantAsAdmin(t, { parentId: child.id })
    for (const target of [tenant.id, child.id, grandchild.id]) {
      const user = await insertUser(t.database.handle.db)
      const response = await invite(
        target,
        { email: user.email, roleId: ROLE_IDS.administrator },
        admin.token,
      )
      expect(response.status).toBe(201)
      expect(response.body.result.createdBy).toBe(admin.id)
    }
  })

  it('refuses an Agent with 403 permission_denied', async () => {
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const user = await insertUser(t.database.handle.db)
    const response = await invite(tenant.id, { email: user.email }, agent.token)
    expect(response.status).toBe(403)
    expect(response.body.error.reason).toBe('permission_denied')
  })

  it('lets a Supervisor invite an Agent or a Supervisor, never an Administrator', async () => {
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const user = await insertUser(t.database.handle.db)
    const admin = await invite(
      tenant.id,
      { email: user.email, roleId: ROLE_IDS.administrator },
      supervisor.token,
    )
    expect(admin.status).toBe(403)
    expect(admin.body.error.reason).toBe('role_exceeds_caller')
    expect(admin.body.error.attribute).toEqual({ roleId: 'exceeds the caller’s own permissions' })
    expect(
      (await invite(tenant.id, { email: user.email, roleId: ROLE_IDS.supervisor }, supervisor.token)).status,
    ).toBe(201)
  })

  it('hides other tenants and parents: 404 tenant_not_found', async () => {
    const child = await createTenantAsAdmin(t, { parentId: tenant.id })
    const childAdmin = await memberWithToken(t, child.id, ROLE_IDS.administrator)
    const user = await insertUser(t.database.handle.db)
    const other = await createTenantAsAdmin(t)
    for (const target of [tenant.id, other.id]) {
      const response = await invite(target, { email: user.email }, childAdmin.token)
      expect(response.status).toBe(404)
      expect(response.body.error.reason).toBe('tenant_not_found')
    }
  })

  it('stops counting a membership once it is disabled', async () => {
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    expect((await update(tenant.id, admin.id, { status: 'disabled' })).status).toBe(200)
    const user = await insertUser(t.database.handle.db)
    const response = await invite(tenant.id, { email: user.email }, admin.token)
    expect(response.status).toBe(404)
  })
})

describe('reads and changes by other members', () => {
  it('answers 404 to a member of another tenant, so ids do not leak', async () => {
    const own = await createTenantAsAdmin(t)
    const member = await memberWithToken(t, own.id, ROLE_IDS.agent)
    // Another tenant where the caller is unknown: 404, not 403.
    const other = await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token: member.token })
    expect(other.status).toBe(404)
  })
  it('refuses an Agent with 403', async () => {
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const user = await insertUser(t.database.handle.db)
    await invite(tenant.id, { email: user.email })
    const response = await update(tenant.id, user.id, { status: 'invited' }, agent.token)
    expect(response.status).toBe(403)
    expect(response.body.error.reason).toBe('permission_denied')
  })
})
