import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * A hostile OpenID provider: it answers discovery and the token endpoint with an ID token of the test's
 * choosing (wrong issuer, audience, nonce, expired). Each must be refused by the relying party.
 */
const t = useTestApp({
  env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
})
let server: Server
let issuer: string
let providerId: string
let member: { id: string; email: string }
let claims: Record<string, unknown> = {}

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  server = createServer(async (req, res) => {
    const json = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (req.url === '/.well-known/openid-configuration')
      return json({
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      })
    if (req.url === '/jwks') return json({ keys: [jwk] })
    if (req.url === '/token') {
      const now = Math.floor(Date.now() / 1000)
      const idToken = await new SignJWT({ email: member.email, email_verified: true, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(String(claims.iss ?? issuer))
        .setAudience(String(claims.aud ?? 'client-1'))
        .setSubject('subject-1')
        .setIssuedAt(now - 10)
        .setExpirationTime(Number(claims.exp ?? now + 300))
        .sign(privateKey)
      return json({ access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: idToken })
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const tenant = await createTenantAsAdmin(t)
  const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
    token: await t.adminToken(),
    body: {
      name: 'Hostile',
      identityProvider: 'oidc',
      issuer,
      clientId: 'client-1',
      clientSecret: 'secret-1',
    },
  })
  expect(created.status).toBe(201)
  providerId = created.body.result.id
  member = await insertUser(t.database.handle.db)
  await insertMembership(t.database.handle.db, {
    tenantId: tenant.id,
    userId: member.id,
    roleId: ROLE_IDS.agent,
  })
})
afterAll(async () => {
  server?.close()
})

/** Starts a login and comes straight back with a code, as the IdP would redirect the browser. */
async function signInWith(override: (nonce: string) => Record<string, unknown>) {
  const start = await t.request('GET', `/v1/sso/${providerId}/login`)
  const location = new URL(String(start.headers.location))
  const state = location.searchParams.get('state') ?? ''
  claims = override(location.searchParams.get('nonce') ?? '')
  const cookie = String(start.headers['set-cookie']).split(';')[0] ?? ''
  return t.request(
    'GET',
    `/v1/sso/${providerId}/callback?code=abc&state=${state}&iss=${encodeURIComponent(issuer)}`,
    {
      headers: { cookie },
    },
  )
}

describe('OIDC ID token attacks', () => {
  it('accepts the genuine token (the baseline the attacks vary)', async () => {
    expect((await signInWith((nonce) => ({ nonce }))).status).toBe(303)
  })
  it('refuses a nonce mismatch', async () => {
    expect((await signInWith(() => ({ nonce: 'another-nonce' }))).status).toBe(401)
  })
  it('refuses a wrong issuer', async () => {
    expect((await signInWith((nonce) => ({ nonce, iss: 'https://evil.example' }))).status).toBe(401)
  })
  it('refuses a wrong audience', async () => {
    expect((await signInWith((nonce) => ({ nonce, aud: 'another-client' }))).status).toBe(401)
  })
  it('refuses an expired ID token', async () => {
    expect((await signInWith((nonce) => ({ nonce, exp: Math.floor(Date.now() / 1000) - 3600 }))).status).toBe(
      401,
    )
  })
})
