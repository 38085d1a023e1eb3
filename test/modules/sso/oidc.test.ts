import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { startTestOp, type TestOp } from '../../helpers/oidc-op.js'
import { useTestApp } from '../../helpers/test-app.js'

/** OpenID Connect sign-in against a real provider (oidc-provider on loopback), followed like a browser. */
const t = useTestApp({
  env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
})
let op: TestOp
let tenant: { id: string; name: string }
let providerId: string
let member: { id: string; email: string }

beforeAll(async () => {
  op = await startTestOp()
  tenant = await createTenantAsAdmin(t)
  const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
    token: await t.adminToken(),
    body: {
      name: 'Test OP',
      identityProvider: 'oidc',
      issuer: op.issuer,
      clientId: op.clientId,
      clientSecret: op.clientSecret,
    },
  })
  expect(created.status).toBe(201)
  expect(created.body.result.clientSecret).toBe('********')
  providerId = created.body.result.id
  op.register(created.body.result.serviceProvider.redirectUri)
  member = await insertUser(t.database.handle.db)
  await insertMembership(t.database.handle.db, {
    tenantId: tenant.id,
    userId: member.id,
    roleId: ROLE_IDS.agent,
  })
})
afterAll(async () => {
  await op?.close()
  await t?.close()
})

/** Login → the OP (cookies kept) → back at the callback URL; returns that URL and our state cookie. */
async function throughTheOp(email: string): Promise<{ callback: URL; cookie: string }> {
  op.signInAs = email
  const start = await t.request('GET', `/v1/sso/${providerId}/login`)
  expect(start.status).toBe(302)
  const cookie = String(start.headers['set-cookie']).split(';')[0] ?? ''
  let url = String(start.headers.location)
  const jar = new Map<string, string>()
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith('http://tenantry.test/')) return { callback: new URL(url), cookie }
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar.entries()].map(([k, v]) => `${k}=${v}`).join('; ') },
    })
    for (const set of response.headers.getSetCookie()) {
      const [pair] = set.split(';')
      const [name, ...value] = (pair ?? '').split('=')
      if (name) jar.set(name, value.join('='))
    }
    const location = response.headers.get('location')
    if (!location) throw new Error(`the OP stopped at ${response.status}: ${await response.text()}`)
    url = new URL(location, url).href
  }
  throw new Error('too many redirects')
}

function callback(url: URL, cookie: string) {
  return t.request('GET', url.pathname + url.search, { headers: { cookie } })
}

describe('OIDC sign-in', () => {
  it('signs a member in with code + PKCE: a token of that tenant’s SSO at the return page', async () => {
    const { callback: url, cookie } = await throughTheOp(member.email)
    const response = await callback(url, cookie)
    expect(response.status).toBe(303)
    const location = new URL(String(response.headers.location))
    expect(location.origin + location.pathname).toBe('http://tenantry.test/sso/complete')
    const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? ''
    const login = await t.request('POST', '/v1/login', { token })
    expect(login.body.result.username).toBe(member.email)
    expect(login.body.result.tenants[0]).toMatchObject({ tenantId: tenant.id, ssoRequired: false })
    // The hand-over is a session of its own, and its token says it was won through single sign-on.
    expect(login.body.result.authMethods).toEqual(['sso'])
    const sessions = await t.request('GET', '/v1/me/sessions', { token })
    expect(sessions.body.result).toEqual([expect.objectContaining({ authMethods: ['sso'], current: true })])
  })

  it('refuses a callback whose state is not the one this browser started (login CSRF), and a reused one', async () => {
    const first = await throughTheOp(member.email)
    const second = await throughTheOp(member.email)
    // The first browser's callback presented with the second browser's cookie.
    expect((await callback(first.callback, second.cookie)).status).toBe(401)
    // A state this service never issued.
    const forged = new URL(second.callback)
    forged.searchParams.set('state', 'forged-state')
    expect((await callback(forged, 'x=1')).status).toBe(401)
    // The genuine pair works once, and only once.
    expect((await callback(second.callback, second.cookie)).status).toBe(303)
    expect((await callback(second.callback, second.cookie)).status).toBe(401)
  })

  it('refuses an e-mail with no accepted membership in the tenant and creates no account', async () => {
    const stranger = `oidc.stranger.${Date.now()}@example.test`
    const { callback: url, cookie } = await throughTheOp(stranger)
    expect((await callback(url, cookie)).status).toBe(403)
    const users = await t.database.handle.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', stranger)
      .execute()
    expect(users).toHaveLength(0)
  })
})
