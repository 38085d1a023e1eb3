import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { startTestOp, type TestOp } from '../../helpers/oidc-op.js'
import { authnStatement, createTestIdp, type TestIdp } from '../../helpers/saml-idp.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Trust in the identity provider (docs/security.md, "Policy"): where a tenant asks for asserted MFA
 * (`mfaAcceptIdp: "asserted"`), a single sign-on counts as a second factor only when the provider asserted
 * more than one factor — OIDC amr, SAML AuthnContextClassRef; otherwise 403 mfa_required there.
 */
const t = useTestApp({
  env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
})
let op: TestOp
let idp: TestIdp
let tenant: { id: string }
let trusting: { id: string }
let samlId: string
let trustingSamlId: string
let oidcId: string
let member: { id: string; email: string }

async function provider(tenantId: string, body: Record<string, unknown>): Promise<string> {
  const created = await t.request('POST', `/v1/tenants/${tenantId}/identity-providers`, {
    token: await t.adminToken(),
    body,
  })
  expect(created.status).toBe(201)
  return created.body.result.id
}

beforeAll(async () => {
  op = await startTestOp()
  idp = createTestIdp()
  // No grace: a sign-in without a second factor is refused at once.
  tenant = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 0, mfaAcceptIdp: 'asserted' })
  trusting = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 0 })
  const saml = { name: 'Test IdP', identityProvider: 'saml', metadataFile: idp.metadata }
  samlId = await provider(tenant.id, saml)
  trustingSamlId = await provider(trusting.id, saml)
  oidcId = await provider(tenant.id, {
    name: 'Test OP',
    identityProvider: 'oidc',
    issuer: op.issuer,
    clientId: op.clientId,
    clientSecret: op.clientSecret,
  })
  const read = await t.request('GET', `/v1/tenants/${tenant.id}/identity-providers/${oidcId}`, {
    token: await t.adminToken(),
  })
  op.register(read.body.result.serviceProvider.redirectUri)
  member = await insertUser(t.database.handle.db)
  for (const id of [tenant.id, trusting.id])
    await insertMembership(t.database.handle.db, { tenantId: id, userId: member.id, roleId: ROLE_IDS.agent })
  // Past the members' deadlines (their memberships were written at the wall clock's time).
  t.clock.set(new Date(Date.now() + 60_000))
})
afterAll(async () => {
  await op?.close()
})

/** A SAML sign-in at `providerId` whose assertion carries `statement`; the token handed over. */
async function samlToken(providerId: string, statement: string): Promise<string> {
  const start = await t.request('GET', `/v1/sso/${providerId}/login`)
  const { inflateRawSync } = await import('node:zlib')
  const request = new URL(String(start.headers.location)).searchParams.get('SAMLRequest') ?? ''
  const requestId = /ID="([^"]+)"/.exec(inflateRawSync(Buffer.from(request, 'base64')).toString())?.[1] ?? ''
  const spMetadata = (await t.request('GET', `/v1/sso/${providerId}/metadata`)).body
  const samlResponse = await idp.respond(spMetadata, member.email, {
    InResponseTo: requestId,
    AuthnStatement: statement,
  })
  const response = await t.request('POST', `/v1/sso/${providerId}/acs`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
  })
  expect(response.status).toBe(303)
  return new URLSearchParams(new URL(String(response.headers.location)).hash.slice(1)).get('token') ?? ''
}

/** An OIDC sign-in through the test provider asserting `amr`; the token handed over. */
async function oidcToken(amr: string[] | undefined): Promise<string> {
  op.signInAs = member.email
  op.amr = amr
  const start = await t.request('GET', `/v1/sso/${oidcId}/login`)
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
  const callback = new URL(url)
  const response = await t.request('GET', callback.pathname + callback.search, { headers: { cookie } })
  expect(response.status).toBe(303)
  return new URLSearchParams(new URL(String(response.headers.location)).hash.slice(1)).get('token') ?? ''
}

const inTenant = (tenantId: string, token: string) =>
  t.request('GET', `/v1/tenants/${tenantId}/users`, { token })

const CLASSES = 'urn:oasis:names:tc:SAML:2.0:ac:classes'

describe('SAML', () => {
  it('an SSO sign-in without asserted MFA where the tenant asks for it: 403 mfa_required there', async () => {
    for (const statement of [
      '',
      authnStatement(`${CLASSES}:PasswordProtectedTransport`),
      authnStatement(`${CLASSES}:Smartcard`),
    ]) {
      const token = await samlToken(samlId, statement)
      expect(decodeJwt(token).idp_mfa).toBeUndefined()
      const refused = await inTenant(tenant.id, token)
      expect(refused.status).toBe(403)
      expect(refused.body.error.reason).toBe('mfa_required')
    }
  })

  it('counts a multi-factor AuthnContextClassRef, Entra ID’s multipleauthn among them', async () => {
    for (const classRef of [
      `${CLASSES}:MobileTwoFactorContract`,
      `${CLASSES}:TimeSyncToken`,
      'http://schemas.microsoft.com/claims/multipleauthn',
    ]) {
      const token = await samlToken(samlId, authnStatement(classRef))
      expect(decodeJwt(token).idp_mfa).toBe(true)
      expect((await inTenant(tenant.id, token)).status, classRef).toBe(200)
    }
  })

  it('counts any sign-in of a tenant that trusts its provider (mfaAcceptIdp always)', async () => {
    const token = await samlToken(trustingSamlId, '')
    expect((await inTenant(trusting.id, token)).status).toBe(200)
  })
})

describe('OIDC', () => {
  it('refuses a sign-in whose amr names a password only, or no amr at all', async () => {
    for (const amr of [undefined, ['pwd']]) {
      const refused = await inTenant(tenant.id, await oidcToken(amr))
      expect(refused.status).toBe(403)
      expect(refused.body.error.reason).toBe('mfa_required')
    }
  })

  it('counts amr holding mfa, otp, hwk or swk', async () => {
    for (const amr of [['pwd', 'mfa'], ['otp'], ['hwk'], ['swk']]) {
      const token = await oidcToken(amr)
      expect((await inTenant(tenant.id, token)).status, amr.join()).toBe(200)
      const login = await t.request('POST', '/v1/login', { token })
      const entry = login.body.result.tenants.find((x: any) => x.tenantId === tenant.id)
      expect(entry).toMatchObject({ mfaRequired: true, mfaDeadline: null })
    }
  })
})
