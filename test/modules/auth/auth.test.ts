import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { createTestApp, useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

const t = useTestApp()

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

describe('POST /v1/tokens', () => {
  it('issues a token with the default ttl, usable as Bearer and as Token', async () => {
    const response = await t.request('POST', '/v1/tokens', {
      body: { username: TEST_ADMIN.email, password: TEST_ADMIN.password },
    })
    expect(response.status).toBe(200)
    expect(response.body.ttl).toBe(86_400)
    expect(Object.keys(response.body).sort()).toEqual(['token', 'ttl'])
    for (const scheme of ['Bearer', 'Token']) {
      const login = await t.request('POST', '/v1/login', {
        authorization: `${scheme} ${response.body.token}`,
      })
      expect(login.status).toBe(200)
      expect(login.body.result.username).toBe(TEST_ADMIN.email)
    }
  })

  it('accepts the username in any case', async () => {
    const response = await t.request('POST', '/v1/tokens', {
      body: { username: TEST_ADMIN.email.toUpperCase(), password: TEST_ADMIN.password },
    })
    expect(response.status).toBe(200)
  })

  it('honours ttl within bounds and refuses one over 7 days', async () => {
    const short = await t.request('POST', '/v1/tokens', {
      body: { username: TEST_ADMIN.email, password: TEST_ADMIN.password, ttl: 120 },
    })
    expect(short.body.ttl).toBe(120)
    t.clock.advance(119_000)
    expect((await t.request('POST', '/v1/login', { token: short.body.token })).status).toBe(200)
    t.clock.advance(2_000)
    expect((await t.request('POST', '/v1/login', { token: short.body.token })).status).toBe(401)

    const long = await t.request('POST', '/v1/tokens', {
      body: { username: TEST_ADMIN.email, password: TEST_ADMIN.password, ttl: 8 * 86_400 },
    })
    expect(long.status).toBe(400)
    expect(long.body.error.attribute).toHaveProperty('ttl')
  })

  it('answers 401 for a wrong password and for an unknown user, with the same message', async () => {
    const wrong = await t.request('POST', '/v1/tokens', {
      body: { username: TEST_ADMIN.email, password: 'not-it' },
    })
    const unknown = await t.request('POST', '/v1/tokens', {
      body: { username: 'nobody@example.test', password: 'not-it' },
    })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body.error.message).toBe(unknown.body.error.message)
    expect(wrong.headers['www-authenticate']).toMatch(/Bearer/)
  })

  it('refuses a disabled user', async () => {
    const user = await insertUser(t.database.handle.db, { status: 'disabled' })
    const response = await t.request('POST', '/v1/tokens', {
      body: { username: user.email, password: user.password },
    })
    expect(response.status).toBe(401)
  })

  it('rate-limits repeated failures for one username with 429 and Retry-After', async () => {
    const user = await insertUser(t.database.handle.db)
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) {
      const r = await t.request('POST', '/v1/tokens', {
        body: { username: user.email, password: `wrong-${i}` },
      })
      statuses.push(r.status)
      if (r.status === 429) expect(Number(r.headers['retry-after'])).toBeGreaterThan(0)
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true)
    expect(statuses[10]).toBe(429)
  })
})

describe('Authorization header forms', () => {
  it('accepts Basic e-mail:password', async () => {
    const response = await t.request('POST', '/v1/login', {
      authorization: basic(TEST_ADMIN.email, TEST_ADMIN.password),
    })
    expect(response.status).toBe(200)
    expect(response.body.result.platformRoleId).toBe(ROLE_IDS.platformAdministrator)
  })

  it.each([
    ['no header', undefined],
    ['an unknown scheme', 'Digest abc'],
    ['a malformed token', 'Bearer not-a-token'],
    ['a forged token', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl'],
    ['Basic without a colon', `Basic ${Buffer.from('nocolon').toString('base64')}`],
    ['a wrong password', basic(TEST_ADMIN.email, 'nope')],
  ])('answers 401 with WWW-Authenticate for %s', async (_label, authorization) => {
    const response = await t.request('GET', '/v1/regions', authorization ? { authorization } : {})
    expect(response.status).toBe(401)
    expect(response.body.error).toMatchObject({ code: 401, reason: 'unauthorized' })
    expect(response.headers['www-authenticate']).toContain('Basic')
  })

  it('answers 401 to an invitation-style token on a route that does not take one', async () => {
    const response = await t.request('GET', '/v1/regions', { authorization: `Token ${'a'.repeat(43)}` })
    expect(response.status).toBe(401)
  })
})

describe('POST /v1/login', () => {
  it("lists the caller's tenants with effective permissions, inherited down the tree", async () => {
    const root = await createTenantAsAdmin(t)
    const child = await createTenantAsAdmin(t, { parentId: root.id })
    const user = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: root.id,
      userId: user.id,
      roleId: ROLE_IDS.agent,
    })
    await insertMembership(t.database.handle.db, {
      tenantId: child.id,
      userId: user.id,
      roleId: ROLE_IDS.supervisor,
    })
    await insertMembership(t.database.handle.db, {
      tenantId: (await createTenantAsAdmin(t)).id,
      userId: user.id,
      roleId: ROLE_IDS.administrator,
      status: 'pending',
    })
    const token = await t.tokenFor(user.email, user.password)
    const response = await t.request('POST', '/v1/login', { token })
    expect(response.status).toBe(200)
    const login = response.body.result
    expect(login).toMatchObject({
      userId: user.id,
      username: user.email,
      platformRoleId: ROLE_IDS.platformUser,
      platformRoleName: 'Platform User',
      platformPermissions: [],
    })
    const byId = Object.fromEntries(login.tenants.map((x: { tenantId: string }) => [x.tenantId, x]))
    expect(Object.keys(byId).sort()).toEqual([root.id, child.id].sort())
    expect(byId[root.id]).toMatchObject({ roleName: 'Agent', tenantName: root.name, tenantActive: true })
    expect(byId[root.id].tenantPermissions).toEqual(['VIEW_ALL_USERS'])
    // Supervisor in the child, plus Agent inherited from the root.
    expect(byId[child.id].tenantPermissions).toEqual([
      'VIEW_ALL_USERS',
      'MANAGE_ALL_USERS',
      'MANAGE_TENANT_ENROLLMENT',
      'VIEW_ALL_PROVIDERS',
      'VIEW_ALL_ROLES',
    ])
  })

  it('works with an empty JSON body or none at all', async () => {
    const token = await t.adminToken()
    const none = await t.request('POST', '/v1/login', { token })
    const empty = await t.request('POST', '/v1/login', {
      token,
      body: '',
      headers: { 'content-type': 'application/json' },
    })
    expect(none.status).toBe(200)
    expect(empty.status).toBe(200)
  })
})

describe('per-credential rate limit', () => {
  it('is off by default and, when an operator sets it, answers 429 with Retry-After past the limit', async () => {
    const token = await t.adminToken()
    for (let i = 0; i < 5; i++) expect((await t.request('GET', '/v1/regions', { token })).status).toBe(200)

    const limited = await createTestApp({ env: { TENANTRY_API_RATE_LIMIT: '3' } })
    try {
      const limitedToken = await limited.adminToken()
      const statuses = []
      for (let i = 0; i < 4; i++)
        statuses.push((await limited.request('GET', '/v1/regions', { token: limitedToken })).status)
      expect(statuses).toEqual([200, 200, 200, 429])
      const refused = await limited.request('GET', '/v1/regions', { token: limitedToken })
      expect(refused.body.error.reason).toBe('rate_limited')
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    } finally {
      await limited.close()
    }
  })
})
