import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { createTestIdp, type TestIdp } from '../../helpers/saml-idp.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * SAML 2.0 sign-in against a real IdP (samlify, signing with its own generated key), and the attacks on
 * an assertion consumer service: each would sign someone in without its defence.
 */
const t = useTestApp()
let idp: TestIdp
let tenant: { id: string; name: string }
let providerId: string
let spMetadata: string
let member: { id: string; email: string }

beforeAll(async () => {
  idp = createTestIdp()
  tenant = await createTenantAsAdmin(t)
  const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
    token: await t.adminToken(),
    body: { name: 'Test IdP', identityProvider: 'saml', metadataFile: idp.metadata },
  })
  expect(created.status).toBe(201)
  providerId = created.body.result.id
  spMetadata = (await t.request('GET', `/v1/sso/${providerId}/metadata`)).body
  const user = await insertUser(t.database.handle.db)
  await insertMembership(t.database.handle.db, {
    tenantId: tenant.id,
    userId: user.id,
    roleId: ROLE_IDS.agent,
  })
  member = user
})

/** Starts a login as a browser would; the AuthnRequest id the IdP must answer. */
async function startLogin(returnTo?: string): Promise<string> {
  const query = returnTo ? `?returnTo=${encodeURIComponent(returnTo)}` : ''
  const response = await t.request('GET', `/v1/sso/${providerId}/login${query}`)
  expect(response.status).toBe(302)
  const location = new URL(String(response.headers.location))
  expect(location.origin + location.pathname).toBe('https://idp.test/sso')
  const { inflateRawSync } = await import('node:zlib')
  const xml = inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest') ?? '', 'base64')).toString()
  return /ID="([^"]+)"/.exec(xml)?.[1] ?? ''
}

function post(samlResponse: string) {
  return t.request('POST', `/v1/sso/${providerId}/acs`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
  })
}

function tokenOf(location: string): string {
  return new URLSearchParams(new URL(location).hash.slice(1)).get('token') ?? ''
}

describe('SAML sign-in', () => {
  it('signs a member in: a token of that tenant’s SSO handed to the return page, audited', async () => {
    const requestId = await startLogin()
    const response = await post(await idp.respond(spMetadata, member.email, { InResponseTo: requestId }))
    expect(response.status).toBe(303)
    const location = String(response.headers.location)
    expect(location.startsWith('http://tenantry.test/sso/complete#')).toBe(true)
    const token = tokenOf(location)
    const login = await t.request('POST', '/v1/login', { token })
    expect(login.body.result.username).toBe(member.email)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token })).status).toBe(200)
    const events = await t.database.handle.db
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'user.sso_signed_in')
      .where('target_id', '=', member.id)
      .execute()
    expect(events).toHaveLength(1)
  })

  it('publishes SP metadata naming the ACS URL and entity id', async () => {
    expect(spMetadata).toContain(`http://tenantry.test/v1/sso/${providerId}/acs`)
    expect(spMetadata).toContain(`entityID="http://tenantry.test/v1/sso/${providerId}/metadata"`)
  })
})

describe('attacks on the assertion consumer', () => {
  async function refused(samlResponse: string, status = 401) {
    const response = await post(samlResponse)
    expect(response.status).toBe(status)
    expect(response.headers.location).toBeUndefined()
    return response
  }

  it('refuses an unsigned assertion', async () => {
    const requestId = await startLogin()
    const signed = Buffer.from(
      await idp.respond(spMetadata, member.email, { InResponseTo: requestId }),
      'base64',
    ).toString()
    const unsigned = signed.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, '')
    expect(unsigned).not.toContain('Signature')
    await refused(Buffer.from(unsigned).toString('base64'))
  })

  it('refuses an assertion signed by another key', async () => {
    const requestId = await startLogin()
    const impostor = createTestIdp()
    const forged = await impostor.respond(spMetadata, member.email, {
      InResponseTo: requestId,
      Issuer: idp.entityId,
    })
    await refused(forged)
  })

  it('refuses signature wrapping: a signed assertion beside an unsigned one for someone else', async () => {
    const victim = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: victim.id,
      roleId: ROLE_IDS.administrator,
    })
    const requestId = await startLogin()
    const signed = Buffer.from(
      await idp.respond(spMetadata, member.email, { InResponseTo: requestId }),
      'base64',
    ).toString()
    const assertion = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signed)?.[0] ?? ''
    const evil = assertion
      .replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '')
      .replace(member.email, victim.email)
      .replace(/ID="[^"]+"/, 'ID="_evil"')
    const wrapped = signed.replace('<saml:Assertion', `${evil}<saml:Assertion`)
    await refused(Buffer.from(wrapped).toString('base64'))
  })

  it('refuses an assertion for another audience', async () => {
    const requestId = await startLogin()
    await refused(
      await idp.respond(spMetadata, member.email, {
        InResponseTo: requestId,
        Audience: 'https://other.example/sp',
      }),
    )
  })

  it('refuses an assertion for another recipient', async () => {
    const requestId = await startLogin()
    await refused(
      await idp.respond(spMetadata, member.email, {
        InResponseTo: requestId,
        SubjectRecipient: 'https://other.example/acs',
        Destination: 'https://other.example/acs',
      }),
    )
  })

  it('refuses an expired assertion and a not-yet-valid one', async () => {
    const past = new Date(Date.now() - 3_600_000).toISOString()
    const requestId = await startLogin()
    await refused(
      await idp.respond(spMetadata, member.email, {
        InResponseTo: requestId,
        ConditionsNotOnOrAfter: past,
        SubjectConfirmationDataNotOnOrAfter: past,
      }),
    )
    const future = new Date(Date.now() + 3_600_000).toISOString()
    const second = await startLogin()
    await refused(
      await idp.respond(spMetadata, member.email, { InResponseTo: second, ConditionsNotBefore: future }),
    )
  })

  it('refuses the replay of a used assertion', async () => {
    const requestId = await startLogin()
    const response = await idp.respond(spMetadata, member.email, { InResponseTo: requestId })
    expect((await post(response)).status).toBe(303)
    await refused(response)
  })

  it('refuses a used assertion id even under a fresh InResponseTo (the database replay cache)', async () => {
    const first = await startLogin()
    const assertionId = `_${Date.now()}replayed`
    expect(
      (
        await post(
          await idp.respond(spMetadata, member.email, { InResponseTo: first, AssertionID: assertionId }),
        )
      ).status,
    ).toBe(303)
    const second = await startLogin()
    await refused(
      await idp.respond(spMetadata, member.email, { InResponseTo: second, AssertionID: assertionId }),
    )
  })

  it('refuses an InResponseTo this service never issued, and an unsolicited response', async () => {
    await refused(await idp.respond(spMetadata, member.email, { InResponseTo: '_never-issued' }))
    await refused(await idp.respond(spMetadata, member.email))
  })

  it('refuses an e-mail with no accepted membership in the tenant, creating and joining nothing', async () => {
    const stranger = `stranger.${Date.now()}@example.test`
    const invited = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: invited.id,
      roleId: ROLE_IDS.agent,
      status: 'invited',
    })
    for (const email of [stranger, invited.email]) {
      const requestId = await startLogin()
      const response = await post(await idp.respond(spMetadata, email, { InResponseTo: requestId }))
      expect(response.status).toBe(403)
    }
    const users = await t.database.handle.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', stranger)
      .execute()
    expect(users).toHaveLength(0)
    const membership = await t.database.handle.db
      .selectFrom('tenant_users')
      .select('status')
      .where('user_id', '=', invited.id)
      .executeTakeFirstOrThrow()
    expect(membership.status).toBe('invited')
  })

  it('refuses a return URL on another origin (no open redirect)', async () => {
    const response = await t.request(
      'GET',
      `/v1/sso/${providerId}/login?returnTo=${encodeURIComponent('https://evil.example/steal')}`,
    )
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('returnTo')
    expect(response.headers.location).toBeUndefined()
    for (const sneaky of ['//evil.example/x', 'http://tenantry.test@evil.example/', 'javascript:alert(1)']) {
      const r = await t.request('GET', `/v1/sso/${providerId}/login?returnTo=${encodeURIComponent(sneaky)}`)
      expect([sneaky, r.status]).toEqual([sneaky, 400])
    }
  })

  it('on this service, hands the token only to its hand-over pages: a redirecting page would pass it on', async () => {
    // A second provider, whose login redirects the browser to its identity provider's site.
    const other = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
      token: await t.adminToken(),
      body: { name: 'Elsewhere', identityProvider: 'saml', metadataFile: createTestIdp().metadata },
    })
    // The browser keeps a fragment through a redirect: the token would reach that provider's page.
    const relay = `http://tenantry.test/v1/sso/${other.body.result.id}/login`
    const response = await t.request(
      'GET',
      `/v1/sso/${providerId}/login?returnTo=${encodeURIComponent(relay)}`,
    )
    expect(response.status).toBe(400)
    expect(response.body.error.attribute.returnTo).toBe(
      'must be a single sign-on page of this service (/sso/complete or /console/sso)',
    )
    expect(response.headers.location).toBeUndefined()
    for (const page of ['/sso/complete', '/console/sso?attempt=abc']) {
      const r = await t.request(
        'GET',
        `/v1/sso/${providerId}/login?returnTo=${encodeURIComponent(`http://tenantry.test${page}`)}`,
      )
      expect([page, r.status]).toEqual([page, 302])
    }
  })
})
