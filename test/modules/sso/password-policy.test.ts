import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import type { MembershipStatus } from '../../../src/db/schema.js'
import { freshTenant, insertMembership, insertUser, memberWithToken } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * GET /v1/tenants/{t}/password-policy-impact (docs/sso.md#6-changing-the-tenants-password-policy): how many accepted members would lose (or gain)
 * password sign-in under another cxengageIdentityProvider, by the rule of docs/product.md#password-rule — and it changes nothing.
 */
let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(async () => t.close())

async function member(tenantId: string, noPassword: boolean | null, status: MembershipStatus = 'accepted') {
  const user = await insertUser(t.ctx.db)
  await insertMembership(t.ctx.db, { tenantId, userId: user.id, roleId: ROLE_IDS.agent, status })
  if (noPassword !== null)
    await t.ctx.db
      .updateTable('tenant_users')
      .set({ no_password: noPassword })
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', user.id)
      .execute()
  return user
}

describe('password-policy impact', () => {
  it('counts the accepted members whose password would stop (or start) counting, and changes nothing', async () => {
    const { tenant, admin } = await freshTenant(t) // the administrator: accepted, noPassword null
    await member(tenant.id, null)
    await member(tenant.id, false) // keeps the password unless the tenant is denied
    await member(tenant.id, true) // SSO only whatever the policy
    await member(tenant.id, null, 'invited') // not a member yet: not counted
    const impact = async (policy: string) => {
      const response = await t.request(
        'GET',
        `/v1/tenants/${tenant.id}/password-policy-impact?cxengageIdentityProvider=${policy}`,
        { token: admin.token },
      )
      expect(response.status).toBe(200)
      return response.body.result
    }
    expect(await impact('disabled')).toEqual({
      tenantId: tenant.id,
      current: 'enabled',
      proposed: 'disabled',
      members: 4,
      passwordSignIn: 3,
      losePasswordSignIn: 2,
      gainPasswordSignIn: 0,
    })
    expect(await impact('denied')).toMatchObject({ losePasswordSignIn: 3, gainPasswordSignIn: 0 })
    expect(await impact('enabled')).toMatchObject({ losePasswordSignIn: 0, gainPasswordSignIn: 0 })
    const read = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: admin.token })
    expect(read.body.result.cxengageIdentityProvider).toBe('enabled')

    // Once denied, enabling again gives it back to those whose membership allows it.
    const put = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: await t.adminToken(),
      body: { cxengageIdentityProvider: 'denied' },
    })
    expect(put.status).toBe(200)
    const back = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/password-policy-impact?cxengageIdentityProvider=enabled`,
      { token: await t.adminToken() },
    )
    expect(back.body.result).toMatchObject({ current: 'denied', passwordSignIn: 0, gainPasswordSignIn: 3 })
  })

  it('needs MANAGE_TENANT, answers 404 for another tenant, and 400 for an unknown policy', async () => {
    const { tenant, admin } = await freshTenant(t)
    const other = await freshTenant(t)
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const path = `/v1/tenants/${tenant.id}/password-policy-impact?cxengageIdentityProvider=disabled`
    expect((await t.request('GET', path, { token: supervisor.token })).status).toBe(403)
    expect((await t.request('GET', path, { token: other.admin.token })).status).toBe(404)
    const bad = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/password-policy-impact?cxengageIdentityProvider=maybe`,
      {
        token: admin.token,
      },
    )
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('cxengageIdentityProvider')
  })
})
