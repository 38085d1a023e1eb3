import { inflateRawSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { freshTenant, insertMembership, insertUser, memberWithToken } from '../../helpers/fixtures.js'
import { startTestOp, type TestOp } from '../../helpers/oidc-op.js'
import { createTestIdp, type TestIdp } from '../../helpers/saml-idp.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * Test sign-ins (docs/sso.md §5): POST …/identity-providers/{id}/test starts a sign-in at a real SAML IdP or
 * OpenID provider on loopback whose answer is checked like a real one and reported — on the page the
 * browser lands on and through GET …/test/{testId} — while nobody is signed in and nobody is created.
 */
let t: TestApp
let idp: TestIdp
let op: TestOp

beforeAll(async () => {
  t = await createTestApp({
    env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
  })
  idp = createTestIdp()
  op = await startTestOp()
})
afterAll(async () => {
  await op?.close()
  await t?.close()
})

async function samlProvider(active = false) {
  const { tenant, admin } = await freshTenant(t)
  const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
    token: admin.token,
    body: { name: 'Test IdP', identityProvider: 'saml', metadataFile: idp.metadata, active },
  })
  expect(created.status).toBe(201)
  const providerId = created.body.result.id as string
  const spMetadata = (await t.request('GET', `/v1/sso/${providerId}/metadata`)).body as string
  return { tenant, admin, providerId, spMetadata }
}

async function startTest(tenantId: string, providerId: string, token: string) {
  const started = await t.request('POST', `/v1/tenants/${tenantId}/identity-providers/${providerId}/test`, {
    token,
  })
  expect(started.status).toBe(201)
  expect(started.headers.location).toBe(
    `/v1/tenants/${tenantId}/identity-providers/${providerId}/test/${started.body.result.id}`,
  )
  expect(started.body.result).toMatchObject({ status: 'pending', email: null })
  return started.body.result as { id: string; url: string }
}

/** The browser opens the test's URL: the AuthnRequest id the IdP must answer. */
async function openSamlTest(url: string): Promise<string> {
  const path = new URL(url)
  const response = await t.request('GET', path.pathname + path.search)
  expect(response.status).toBe(302)
  const location = new URL(String(response.headers.location))
  const xml = inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest') ?? '', 'base64')).toString()
  return /ID="([^"]+)"/.exec(xml)?.[1] ?? ''
}

function postAcs(providerId: string, samlResponse: string) {
  return t.request('POST', `/v1/sso/${providerId}/acs`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
  })
}

async function signInEvents(userId: string) {
  return t.ctx.db
    .selectFrom('audit_events')
    .select('id')
    .where('action', '=', 'user.sso_signed_in')
    .where('target_id', '=', userId)
    .execute()
}

describe('a SAML test sign-in', () => {
  it('of an inactive provider reports what it asserted, on the page and through the API, signing nobody in', async () => {
    const { tenant, admin, providerId, spMetadata } = await samlProvider(false)
    const member = await insertUser(t.ctx.db)
    await insertMembership(t.ctx.db, { tenantId: tenant.id, userId: member.id, roleId: ROLE_IDS.agent })
    const test = await startTest(tenant.id, providerId, admin.token)
    expect(test.url).toBe(`http://tenantry.test/v1/sso/${providerId}/login?test=${test.id}`)
    const requestId = await openSamlTest(test.url)
    const page = await postAcs(
      providerId,
      await idp.respond(spMetadata, member.email, { InResponseTo: requestId }),
    )
    expect(page.status).toBe(200)
    expect(page.headers.location).toBeUndefined()
    expect(page.headers['cache-control']).toBe('no-store')
    expect(String(page.headers['content-security-policy'])).toContain("default-src 'none'")
    expect(page.body).toContain('Test sign-in result')
    expect(page.body).toContain(member.email)
    expect(page.body).toContain('nobody was signed in')
    expect(page.body).not.toMatch(/token=/)

    const read = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/identity-providers/${providerId}/test/${test.id}`,
      { token: admin.token },
    )
    expect(read.status).toBe(200)
    expect(read.body.result).toMatchObject({
      status: 'succeeded',
      email: member.email,
      nameId: member.email,
      memberFound: true,
      error: null,
    })
    expect(await signInEvents(member.id)).toHaveLength(0)
    const audit = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/audit-events?action=identity_provider.test_started`,
      { token: admin.token },
    )
    expect(audit.body.result[0]).toMatchObject({
      actor: { id: admin.id },
      target: { type: 'identityProvider', id: providerId },
    })
  })

  it('creates nobody for an unknown e-mail, and says a real sign-in would be refused', async () => {
    const { tenant, admin, providerId, spMetadata } = await samlProvider(true)
    const stranger = `saml.test.stranger.${Date.now()}@example.test`
    const test = await startTest(tenant.id, providerId, admin.token)
    const requestId = await openSamlTest(test.url)
    const page = await postAcs(
      providerId,
      await idp.respond(spMetadata, stranger, { InResponseTo: requestId }),
    )
    expect(page.status).toBe(200)
    expect(page.body).toContain('a real sign-in would be refused')
    const read = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/identity-providers/${providerId}/test/${test.id}`,
      { token: admin.token },
    )
    expect(read.body.result).toMatchObject({ status: 'succeeded', email: stranger, memberFound: false })
    const users = await t.ctx.db.selectFrom('users').select('id').where('email', '=', stranger).execute()
    expect(users).toHaveLength(0)
  })

  it('reports a forged answer as refused, in words', async () => {
    const { tenant, admin, providerId, spMetadata } = await samlProvider(false)
    const member = await insertUser(t.ctx.db)
    const test = await startTest(tenant.id, providerId, admin.token)
    const requestId = await openSamlTest(test.url)
    const forged = await createTestIdp().respond(spMetadata, member.email, {
      InResponseTo: requestId,
      Issuer: idp.entityId,
    })
    const page = await postAcs(providerId, forged)
    expect(page.status).toBe(200)
    expect(page.body).toContain('was refused')
    const read = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/identity-providers/${providerId}/test/${test.id}`,
      { token: admin.token },
    )
    expect(read.body.result).toMatchObject({ status: 'failed', email: null })
    expect(read.body.result.error).toMatch(/signature/i)
  })

  it('cannot be turned into a real sign-in: a test’s answer hidden from the test routing is still refused', async () => {
    const { tenant, admin, providerId, spMetadata } = await samlProvider(true)
    const member = await insertUser(t.ctx.db)
    await insertMembership(t.ctx.db, {
      tenantId: tenant.id,
      userId: member.id,
      roleId: ROLE_IDS.administrator,
    })
    const test = await startTest(tenant.id, providerId, admin.token)
    const requestId = await openSamlTest(test.url)
    const signed = Buffer.from(
      await idp.respond(spMetadata, member.email, { InResponseTo: requestId }),
      'base64',
    ).toString()
    // A comment before the signed content names another request first: the answer looks like no test's.
    const disguised = signed.replace(/<samlp?:Response/, '<!-- InResponseTo="_not-a-test" -->$&')
    expect(disguised).not.toBe(signed)
    const response = await postAcs(providerId, Buffer.from(disguised).toString('base64'))
    expect(response.status).toBe(401)
    expect(response.headers.location).toBeUndefined()
    expect(await signInEvents(member.id)).toHaveLength(0)
    // and replaying the genuine answer afterwards signs nobody in either
    const replay = await postAcs(providerId, Buffer.from(signed).toString('base64'))
    expect(replay.status).toBe(401)
    expect(await signInEvents(member.id)).toHaveLength(0)
  })

  it('starts once, and only for its own provider', async () => {
    const { tenant, admin, providerId } = await samlProvider(false)
    const test = await startTest(tenant.id, providerId, admin.token)
    await openSamlTest(test.url)
    const again = await t.request('GET', `/v1/sso/${providerId}/login?test=${test.id}`)
    expect(again.status).toBe(404)
    const other = await samlProvider(false)
    const second = await startTest(tenant.id, providerId, admin.token)
    const elsewhere = await t.request('GET', `/v1/sso/${other.providerId}/login?test=${second.id}`)
    expect(elsewhere.status).toBe(404)
  })
})

describe('a test sign-in started with a returnTo (the console)', () => {
  it('reports, then moves the browser on to that page of this service by itself', async () => {
    const { tenant, admin, providerId, spMetadata } = await samlProvider(false)
    const member = await insertUser(t.ctx.db)
    const test = await startTest(tenant.id, providerId, admin.token)
    const back = `http://tenantry.test/console/tenants/${tenant.id}/identity-providers/${providerId}/tests/${test.id}`
    const requestId = await openSamlTest(`${test.url}&returnTo=${encodeURIComponent(back)}`)
    const page = await postAcs(
      providerId,
      await idp.respond(spMetadata, member.email, { InResponseTo: requestId }),
    )
    expect(page.status).toBe(200)
    expect(page.body).toContain(member.email)
    // A page of this site that moves on (not a redirect, which would count as the provider's navigation).
    expect(page.body).toContain(`<meta http-equiv="refresh" content="0; url=${back}">`)
    expect(page.body).toContain('Continue to the page the test was started from')
  })

  it('refuses a returnTo on another site, before the test is used up', async () => {
    const { tenant, admin, providerId } = await samlProvider(false)
    const test = await startTest(tenant.id, providerId, admin.token)
    const path = new URL(test.url)
    const elsewhere = await t.request(
      'GET',
      `${path.pathname}${path.search}&returnTo=${encodeURIComponent('https://evil.example/console')}`,
    )
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.body.error.attribute.returnTo).toBe('must be on http://tenantry.test')
    expect(elsewhere.headers.location).toBeUndefined()
    await openSamlTest(test.url)
  })
})

describe('who may test', () => {
  it('answers 404 for another tenant’s provider or test, and 403 without IDENTITY_PROVIDERS_UPDATE', async () => {
    const mine = await samlProvider(false)
    const theirs = await samlProvider(false)
    const test = await startTest(theirs.tenant.id, theirs.providerId, theirs.admin.token)
    const start = await t.request(
      'POST',
      `/v1/tenants/${mine.tenant.id}/identity-providers/${theirs.providerId}/test`,
      { token: mine.admin.token },
    )
    expect(start.status).toBe(404)
    expect(start.body.error.reason).toBe('identity_provider_not_found')
    const read = await t.request(
      'GET',
      `/v1/tenants/${mine.tenant.id}/identity-providers/${theirs.providerId}/test/${test.id}`,
      { token: mine.admin.token },
    )
    expect(read.status).toBe(404)
    const underTheirs = await t.request(
      'GET',
      `/v1/tenants/${theirs.tenant.id}/identity-providers/${theirs.providerId}/test/${test.id}`,
      { token: mine.admin.token },
    )
    expect(underTheirs.status).toBe(404)
    const agent = await memberWithToken(t, theirs.tenant.id, ROLE_IDS.agent)
    const refused = await t.request(
      'POST',
      `/v1/tenants/${theirs.tenant.id}/identity-providers/${theirs.providerId}/test`,
      { token: agent.token },
    )
    expect(refused.status).toBe(403)
  })
})

describe('an OpenID Connect test sign-in', () => {
  it('follows the provider like a browser and reports the claims, signing nobody in', async () => {
    const { tenant, admin } = await freshTenant(t)
    const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
      token: admin.token,
      body: {
        name: 'Test OP',
        identityProvider: 'oidc',
        issuer: op.issuer,
        clientId: op.clientId,
        clientSecret: op.clientSecret,
        active: false,
      },
    })
    expect(created.status).toBe(201)
    const providerId = created.body.result.id as string
    op.register(created.body.result.serviceProvider.redirectUri)
    const member = await insertUser(t.ctx.db)
    await insertMembership(t.ctx.db, { tenantId: tenant.id, userId: member.id, roleId: ROLE_IDS.agent })
    op.signInAs = member.email

    const test = await startTest(tenant.id, providerId, admin.token)
    const path = new URL(test.url)
    const start = await t.request('GET', path.pathname + path.search)
    expect(start.status).toBe(302)
    const cookie = String(start.headers['set-cookie']).split(';')[0] ?? ''
    let url = String(start.headers.location)
    const jar = new Map<string, string>()
    for (let hop = 0; hop < 10 && !url.startsWith('http://tenantry.test/'); hop++) {
      const response = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...jar.entries()].map(([k, v]) => `${k}=${v}`).join('; ') },
      })
      for (const set of response.headers.getSetCookie()) {
        const [name, ...value] = (set.split(';')[0] ?? '').split('=')
        if (name) jar.set(name, value.join('='))
      }
      url = new URL(response.headers.get('location') ?? '', url).href
    }
    const back = new URL(url)
    const page = await t.request('GET', back.pathname + back.search, { headers: { cookie } })
    expect(page.status).toBe(200)
    expect(page.headers.location).toBeUndefined()
    expect(page.body).toContain(member.email)
    expect(page.body).toContain('a real sign-in would work')
    const read = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/identity-providers/${providerId}/test/${test.id}`,
      { token: admin.token },
    )
    expect(read.body.result).toMatchObject({
      status: 'succeeded',
      email: member.email,
      memberFound: true,
      attributes: { sub: member.email, email: member.email },
    })
    expect(await signInEvents(member.id)).toHaveLength(0)
    // the same redirect presented again is refused, and signs nobody in
    const replay = await t.request('GET', back.pathname + back.search, { headers: { cookie } })
    expect(replay.status).not.toBe(303)
    expect(await signInEvents(member.id)).toHaveLength(0)
  })
})
