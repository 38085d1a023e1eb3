import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AUTH_INFO_WINDOW_MS } from '../../../src/modules/sso/auth-info-limits.js'
import { createTenantAsAdmin } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * `GET /v1/auth-info/{email}` tells anyone whether an address is a member of a tenant, and which (issue 37
 * item 13): look-ups are limited per e-mail address and per client address like the other unauthenticated
 * look-ups, 429 in the envelope with Retry-After past a limit.
 */
let t: TestApp
let tenantId: string

beforeAll(async () => {
  t = await createTestApp({
    env: { TENANTRY_AUTH_INFO_LIMIT_PER_EMAIL: '3', TENANTRY_AUTH_INFO_LIMIT_PER_ADDRESS: '6' },
  })
  tenantId = (await createTenantAsAdmin(t)).id
})
afterAll(async () => {
  await t.close()
})

/** A look-up as a login page sends it: no credentials, from `client`. */
async function lookUp(key: string, client: string) {
  const answer = await t.app.inject({
    method: 'GET',
    url: `/v1/auth-info/${encodeURIComponent(key)}`,
    remoteAddress: client,
  })
  return { status: answer.statusCode, headers: answer.headers, body: answer.json() }
}

describe('auth-info look-ups', () => {
  it('are limited per e-mail address: 429 in the envelope with Retry-After, while another address is still answered', async () => {
    // Each look-up from a client of its own: only the e-mail's count is in play.
    for (let i = 1; i <= 3; i++) expect((await lookUp('ana@acme.test', `10.1.0.${i}`)).status).toBe(200)
    const refused = await lookUp('ana@acme.test', '10.1.0.4')
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({
      error: {
        code: 429,
        reason: 'rate_limited',
        message: expect.stringContaining('e-mail address'),
        requestId: refused.headers['x-request-id'],
      },
    })
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(AUTH_INFO_WINDOW_MS / 1000)
    // The same address however it is written counts as one.
    expect((await lookUp(' ANA@Acme.test', '10.1.0.5')).status).toBe(429)

    const other = await lookUp('bruno@acme.test', '10.1.0.6')
    expect(other.status).toBe(200)
    expect(other.body.result).toEqual({ tenantId: null, identityProviders: [], password: true })
  })

  it('are limited per client address, whichever e-mails it asks about; another client is still answered', async () => {
    for (let i = 1; i <= 6; i++) expect((await lookUp(`person${i}@acme.test`, '10.2.0.1')).status).toBe(200)
    const refused = await lookUp('person7@acme.test', '10.2.0.1')
    expect(refused.status).toBe(429)
    expect(refused.body.error.message).toContain('from this address')
    expect(refused.headers['retry-after']).toBeDefined()
    expect((await lookUp('person7@acme.test', '10.2.0.2')).status).toBe(200)
  })

  it('count a tenant id per client address only: a tenant’s login page serves all its people', async () => {
    for (let i = 1; i <= 10; i++) {
      const answer = await lookUp(tenantId, `10.3.0.${i}`)
      expect(answer.status).toBe(200)
      expect(answer.body.result.tenantId).toBe(tenantId)
    }
  })

  it('are answered again once the window has passed', async () => {
    for (let i = 1; i <= 3; i++) expect((await lookUp('carla@acme.test', `10.4.0.${i}`)).status).toBe(200)
    expect((await lookUp('carla@acme.test', '10.4.0.4')).status).toBe(429)
    t.clock.advance(AUTH_INFO_WINDOW_MS)
    expect((await lookUp('carla@acme.test', '10.4.0.4')).status).toBe(200)
  })

  it('are documented with their 429', () => {
    const document = t.app.swagger() as unknown as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>
    }
    const responses = document.paths['/v1/auth-info/{emailOrTenantId}']!.get.responses
    expect(JSON.stringify(responses['429'])).toContain('rate_limited')
  })
})

describe('the default limits', () => {
  let defaults: TestApp
  beforeAll(async () => {
    defaults = await createTestApp()
  })
  afterAll(async () => {
    await defaults.close()
  })

  it('never stop a person signing in, even many times over, from one office address', async () => {
    // The console asks twice a sign-in: fifteen sign-ins within the window.
    for (let i = 0; i < 30; i++) {
      const answer = await defaults.app.inject({ method: 'GET', url: '/v1/auth-info/ana@acme.test' })
      expect(answer.statusCode, `look-up ${i + 1}`).toBe(200)
    }
    expect(defaults.config.authInfoLimitPerEmail).toBe(30)
    expect(defaults.config.authInfoLimitPerAddress).toBe(1000)
  })
})
