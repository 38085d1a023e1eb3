import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, uniqueEmail, uniqueName } from '../../helpers/fixtures.js'
import { createScimKey, PATCH_OP, scimTenant, userBody } from '../../helpers/scim.js'
import { createTestApp, FollowingClock, type TestApp } from '../../helpers/test-app.js'

/**
 * The attacks of issue 31 on the SCIM endpoint (docs/scim.md), each answered by the defence it names; each
 * test fails without that defence.
 */
let t: TestApp
let admin: string
beforeAll(async () => {
  t = await createTestApp({ clock: new FollowingClock() })
  admin = await t.adminToken()
})
afterAll(() => t.close())

const ERROR = ['urn:ietf:params:scim:api:messages:2.0:Error']

describe('the SCIM credential', () => {
  it('refuses a valid token on another tenant’s endpoint with 404 (the tenant in the path must be the key’s)', async () => {
    const mine = await scimTenant(t)
    const other = await scimTenant(t)
    const victim = await other.scim('POST', '/Users', userBody(uniqueEmail('victim')))
    for (const path of ['/Users', `/Users/${victim.body.id}`, '/ServiceProviderConfig']) {
      const r = await t.request('GET', `${other.base}${path}`, { authorization: `Bearer ${mine.token}` })
      expect(r.status, path).toBe(404)
      expect(r.body.schemas).toEqual(ERROR)
    }
    const write = await t.request('DELETE', `${other.base}/Users/${victim.body.id}`, {
      authorization: `Bearer ${mine.token}`,
    })
    expect(write.status).toBe(404)
    expect((await other.scim('GET', `/Users/${victim.body.id}`)).status).toBe(200)
  })

  it('refuses an ordinary API key on SCIM, and the SCIM token (or its key as Basic / for a token) on /v1', async () => {
    const s = await scimTenant(t)
    const ordinary = await t.request('POST', `/v1/tenants/${s.tenantId}/api-keys`, {
      token: admin,
      body: { name: uniqueName('Key'), roleId: ROLE_IDS.administrator },
    })
    expect(ordinary.body.result.scope).toBe('api')
    const { id, secret } = ordinary.body.result
    for (const authorization of [
      `Bearer ${id}.${secret}`,
      `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
    ]) {
      const r = await t.request('GET', `${s.base}/Users`, { authorization })
      expect(r.status).toBe(401)
      expect(r.headers['www-authenticate']).toMatch(/^Bearer/)
      expect(r.body.schemas).toEqual(ERROR)
    }
    const secretPart = s.token.slice(37)
    for (const authorization of [
      `Bearer ${s.token}`,
      `Basic ${Buffer.from(`${s.keyId}:${secretPart}`).toString('base64')}`,
    ]) {
      expect((await t.request('GET', `/v1/tenants/${s.tenantId}/users`, { authorization })).status).toBe(401)
    }
    expect(
      (await t.request('POST', '/v1/tokens', { body: { username: s.keyId, password: secretPart } })).status,
    ).toBe(401)
  })

  it('answers 401 with WWW-Authenticate: Bearer for a missing, wrong, disabled or expired token, and revokes at once', async () => {
    const s = await scimTenant(t)
    expect((await s.scim('GET', '/Users')).status).toBe(200)
    for (const authorization of [
      undefined,
      'Bearer nonsense',
      `Bearer ${s.keyId}.wrong-secret`,
      `Basic ${Buffer.from('a:b').toString('base64')}`,
    ]) {
      const r = await t.request('GET', `${s.base}/Users`, authorization ? { authorization } : {})
      expect(r.status).toBe(401)
      expect(r.headers['www-authenticate']).toMatch(/^Bearer/)
    }
    const disabled = await t.request('PUT', `/v1/tenants/${s.tenantId}/api-keys/${s.keyId}`, {
      token: admin,
      body: { status: 'disabled' },
    })
    expect(disabled.status).toBe(200)
    const revoked = await s.scim('GET', '/Users')
    expect(revoked.status).toBe(401)
    const expiring = await createScimKey(t, s.tenantId, {
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    })
    expect(expiring.status).toBe(201)
    const token = expiring.body.result.token
    expect((await t.request('GET', `${s.base}/Users`, { authorization: `Bearer ${token}` })).status).toBe(200)
    t.clock.advance(120_000)
    expect((await t.request('GET', `${s.base}/Users`, { authorization: `Bearer ${token}` })).status).toBe(401)
  })

  it('allows at most two live SCIM keys per tenant (409 on a third, also when re-enabling)', async () => {
    const tenant = await createTenantAsAdmin(t)
    const first = await createScimKey(t, tenant.id)
    const second = await createScimKey(t, tenant.id)
    expect([first.status, second.status]).toEqual([201, 201])
    expect(first.body.result.secret).toBeUndefined()
    const third = await createScimKey(t, tenant.id)
    expect(third.status).toBe(409)
    expect(third.body.error.reason).toBe('scim_key_limit')
    await t.request('PUT', `/v1/tenants/${tenant.id}/api-keys/${first.body.result.id}`, {
      token: admin,
      body: { status: 'disabled' },
    })
    const rotated = await createScimKey(t, tenant.id)
    expect(rotated.status).toBe(201)
    const reenable = await t.request('PUT', `/v1/tenants/${tenant.id}/api-keys/${first.body.result.id}`, {
      token: admin,
      body: { status: 'enabled' },
    })
    expect(reenable.status).toBe(409)
  })
})

describe('permissions and the role ceiling', () => {
  it('an Agent key reads but cannot write; a Supervisor key cannot create a user above it through a mapped group (403, nothing changed)', async () => {
    const agentKey = await scimTenant(t, ROLE_IDS.agent)
    expect((await agentKey.scim('GET', '/Users')).status).toBe(200)
    const refused = await agentKey.scim('POST', '/Users', userBody(uniqueEmail('agent')))
    expect(refused.status).toBe(403)
    expect(refused.body.schemas).toEqual(ERROR)

    const s = await scimTenant(t, ROLE_IDS.supervisor)
    const user = await s.scim('POST', '/Users', userBody(uniqueEmail('member')))
    expect(user.status).toBe(201)
    const group = await s.scim('POST', '/Groups', { displayName: 'Admins' })
    // An administrator maps the group to Administrator, a role above the Supervisor key.
    const mapped = await t.request('PUT', `/v1/tenants/${s.tenantId}/scim/groups/${group.body.id}`, {
      token: admin,
      body: { roleId: ROLE_IDS.administrator, priority: 1 },
    })
    expect(mapped.status).toBe(200)
    const escalate = await s.scim('PATCH', `/Groups/${group.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: [{ value: user.body.id }] }],
    })
    expect(escalate.status).toBe(403)
    expect((await s.scim('GET', `/Groups/${group.body.id}`)).body.members).toBeUndefined()
    const m = await t.request('GET', `/v1/tenants/${s.tenantId}/users/${user.body.id}`, { token: admin })
    expect(m.body.result.roleId).toBe(ROLE_IDS.agent)
  })
})

describe('hostile input: a fast 4xx, never a 5xx, and the process healthy after', () => {
  it('refuses a 100 KB filter, a 1,000-deep filter and a PATCH of 10,000 operations quickly', async () => {
    const s = await scimTenant(t)
    const id = (await s.scim('POST', '/Users', userBody(uniqueEmail('hostile')))).body.id
    const long = `userName eq "${'a'.repeat(100 * 1024)}"`
    const deep = `${'('.repeat(1000)}userName eq "x"${')'.repeat(1000)}`
    const brackets = `emails${'['.repeat(1000)}value eq "x"${']'.repeat(1000)}`
    for (const filter of [long, deep, brackets]) {
      const started = performance.now()
      const viaGet = await s.scim('GET', `/Users?filter=${encodeURIComponent(filter)}`)
      const viaSearch = await s.scim('POST', '/.search', { filter })
      expect(performance.now() - started).toBeLessThan(2_000)
      for (const r of [viaGet, viaSearch]) {
        expect(r.status).toBeGreaterThanOrEqual(400)
        expect(r.status).toBeLessThan(500)
      }
      expect(viaSearch.body.scimType).toBe('invalidFilter')
    }
    const operations = Array.from({ length: 10_000 }, (_, i) => ({
      op: 'add',
      path: 'title',
      value: `t${i}`,
    }))
    const started = performance.now()
    const big = await s.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: operations })
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(big.status).toBe(400)
    expect(big.body.scimType).toBe('tooMany')
    expect((await s.scim('GET', `/Users/${id}`)).body.title).toBeUndefined()
    expect((await t.request('GET', '/healthz')).status).toBe(200)
    expect((await s.scim('GET', '/Users')).status).toBe(200)
  })
})
