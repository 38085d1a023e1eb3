import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, memberWithToken, REGION_ID, uniqueName } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * The password rule (docs/product.md#password-rule), attacked the way the issue found it open: a member
 * who must use SSO logs in with a password and acts in the tenant anyway.
 */
const t = useTestApp()

async function setNoPassword(tenantId: string, userId: string, value: boolean | null) {
  await t.database.handle.db
    .updateTable('tenant_users')
    .set({ no_password: value })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute()
  t.ctx.access.invalidate()
}

function basic(email: string, password: string) {
  return `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`
}

async function ssoToken(userId: string, tenantId: string) {
  // The token the SSO flows hand over (sso-oidc/sso-saml tests drive the real flows end to end).
  const sso = { tenantId, providerId: tenantId }
  const client = { ip: null, userAgent: null }
  const started = await t.app.authenticator.sessions.start(
    { userId, authMethods: ['sso'], sso, client },
    3600,
  )
  if (!started) throw new Error('the SSO session was refused')
  return started.token
}

describe('a member with noPassword: true', () => {
  it('gets 403 sso_required with a password token or Basic password on every route of that tenant', async () => {
    const tenant = await createTenantAsAdmin(t)
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    // Before: the password works (the member was allowed to use it).
    expect((await t.request('GET', `/v1/tenants/${tenant.id}`, { token: admin.token })).status).toBe(200)
    await setNoPassword(tenant.id, admin.id, true)

    for (const auth of [{ token: admin.token }, { authorization: basic(admin.email, admin.password) }]) {
      const read = await t.request('GET', `/v1/tenants/${tenant.id}`, auth)
      expect(read.status).toBe(403)
      expect(read.body.error.reason).toBe('sso_required')
      const sub = await t.request('POST', '/v1/tenants', {
        ...auth,
        body: { name: uniqueName(), regionId: REGION_ID, parentId: tenant.id },
      })
      expect(sub.status).toBe(403)
      expect(sub.body.error.reason).toBe('sso_required')
      for (const path of ['users', 'integrations', 'roles', 'api-keys', 'identity-providers']) {
        const response = await t.request('GET', `/v1/tenants/${tenant.id}/${path}`, auth)
        expect([path, response.status, response.body.error?.reason]).toEqual([path, 403, 'sso_required'])
      }
      // Nor may it create platform users on the strength of that membership.
      const user = await t.request('POST', '/v1/users', {
        ...auth,
        body: { email: `x.${Date.now()}@example.test`, roleId: ROLE_IDS.platformUser },
      })
      expect(user.status).toBe(403)
    }

    const login = await t.request('POST', '/v1/login', { token: admin.token })
    expect(login.body.result.tenants).toEqual([
      expect.objectContaining({
        tenantId: tenant.id,
        password: false,
        ssoRequired: true,
        tenantPermissions: [],
      }),
    ])
    const me = await t.request('GET', '/v1/me', { token: admin.token })
    expect(me.status).toBe(200)
    expect(me.body.result).toEqual([
      {
        tenantId: tenant.id,
        name: tenant.name,
        description: '',
        active: true,
        password: false,
        identityProviders: [],
      },
    ])
  })

  it('acts in that tenant and its sub-tenants with a token from that tenant’s SSO', async () => {
    const tenant = await createTenantAsAdmin(t)
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    await setNoPassword(tenant.id, admin.id, true)
    const token = await ssoToken(admin.id, tenant.id)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}`, { token })).status).toBe(200)
    const sub = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName(), regionId: REGION_ID, parentId: tenant.id },
    })
    expect(sub.status).toBe(201)
    expect((await t.request('GET', `/v1/tenants/${sub.body.result.id}/users`, { token })).status).toBe(200)
    const login = await t.request('POST', '/v1/login', { token })
    expect(login.body.result.tenants[0]).toMatchObject({ password: false, ssoRequired: false })
  })
})

describe('an SSO login for tenant A used in tenant B', () => {
  it('grants nothing in B (403 sso_required), and no platform power', async () => {
    const a = await createTenantAsAdmin(t)
    const b = await createTenantAsAdmin(t)
    const user = await memberWithToken(t, a.id, ROLE_IDS.administrator)
    await t.database.handle.db
      .insertInto('tenant_users')
      .values({
        tenant_id: b.id,
        user_id: user.id,
        role_id: ROLE_IDS.administrator,
        status: 'accepted',
        no_password: true,
        created: new Date(),
        created_by: user.id,
        updated: new Date(),
        updated_by: user.id,
      })
      .execute()
    t.ctx.access.invalidate()
    const fromA = await ssoToken(user.id, a.id)
    expect((await t.request('GET', `/v1/tenants/${a.id}`, { token: fromA })).status).toBe(200)
    const inB = await t.request('GET', `/v1/tenants/${b.id}/users`, { token: fromA })
    expect(inB.status).toBe(403)
    expect(inB.body.error.reason).toBe('sso_required')
    // B's own SSO does work in B.
    expect(
      (await t.request('GET', `/v1/tenants/${b.id}/users`, { token: await ssoToken(user.id, b.id) })).status,
    ).toBe(200)
  })

  it('gives a Platform Administrator signed in through a tenant’s SSO no platform permission', async () => {
    const a = await createTenantAsAdmin(t)
    const login = await t.request('POST', '/v1/login', { token: await t.adminToken() })
    const adminId = login.body.result.userId
    await t.database.handle.db
      .insertInto('tenant_users')
      .values({
        tenant_id: a.id,
        user_id: adminId,
        role_id: ROLE_IDS.agent,
        status: 'accepted',
        created: new Date(),
        created_by: adminId,
        updated: new Date(),
        updated_by: adminId,
      })
      .execute()
    t.ctx.access.invalidate()
    const token = await ssoToken(adminId, a.id)
    const root = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName(), regionId: REGION_ID },
    })
    expect(root.status).toBe(403)
  })
})

describe('the tenant setting cxengageIdentityProvider', () => {
  it('denied: a member’s password token grants nothing even with noPassword false', async () => {
    const tenant = await createTenantAsAdmin(t)
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    await setNoPassword(tenant.id, admin.id, false)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token: admin.token })).status).toBe(
      200,
    )
    const put = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: admin.token,
      body: { cxengageIdentityProvider: 'denied' },
    })
    expect(put.status).toBe(200)
    t.ctx.access.invalidate()
    const after = await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token: admin.token })
    expect(after.status).toBe(403)
    expect(after.body.error.reason).toBe('sso_required')
  })

  it('disabled: noPassword null follows the tenant (no password), false still allows it', async () => {
    const tenant = await createTenantAsAdmin(t)
    const nullMember = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const falseMember = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    await setNoPassword(tenant.id, falseMember.id, false)
    await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: await t.adminToken(),
      body: { cxengageIdentityProvider: 'disabled' },
    })
    t.ctx.access.invalidate()
    expect(
      (await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token: nullMember.token })).status,
    ).toBe(403)
    expect(
      (await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token: falseMember.token })).status,
    ).toBe(200)
    const info = await t.request('GET', `/v1/auth-info/${nullMember.email}`)
    expect(info.body.result).toEqual({ tenantId: tenant.id, identityProviders: [], password: false })
  })
})

describe('GET /v1/auth-info', () => {
  it('answers the same shape for an unknown e-mail and an unknown tenant', async () => {
    const unknown = await t.request('GET', '/v1/auth-info/nobody@example.test')
    expect(unknown.status).toBe(200)
    expect(unknown.body.result).toEqual({ tenantId: null, identityProviders: [], password: true })
    const tenant = await t.request('GET', '/v1/auth-info/0190a0a0-0000-7000-8000-000000000000')
    expect(tenant.body.result).toEqual(unknown.body.result)
  })
})
