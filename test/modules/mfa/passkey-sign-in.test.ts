import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { SIGNATURE_MAX } from '../../../src/modules/mfa/webauthn.schemas.js'
import { insertUser } from '../../helpers/fixtures.js'
import {
  authenticatorFor,
  enrolPasskeyOverHttp,
  type Misbehaviour,
  type SoftAuthenticator,
} from '../../helpers/soft-authenticator.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Signing in with a passkey alone (docs/security.md, "Passkeys"), over HTTP with a software
 * authenticator: the session it starts and how its token says it was won — and the attacks, each failing
 * without its defence.
 */
const t = useTestApp()

async function withPasskey(multiDevice = false) {
  const user = await insertUser(t.database.handle.db)
  const token = await t.tokenFor(user.email, user.password)
  const authenticator = authenticatorFor(t.config.publicUrl, multiDevice)
  const factor = await enrolPasskeyOverHttp(t, token, authenticator)
  return { ...user, authenticator, factor }
}

async function options(body: Record<string, unknown> = {}) {
  const response = await t.request('POST', '/v1/tokens/passkey/options', { body })
  expect(response.status).toBe(200)
  return response.body.result
}

async function signIn(authenticator: SoftAuthenticator, wrong: Misbehaviour = {}) {
  const response = authenticator.assert(await options(), wrong)
  return t.request('POST', '/v1/tokens/passkey', { body: { response } })
}

async function eventsOf(action: string, userId: string) {
  const events = await t.request('GET', `/v1/audit-events?action=${action}&targetId=${userId}`, {
    token: await t.adminToken(),
  })
  return events.body.result
}

describe('passkey sign-in', () => {
  it('answers request options that say nothing of who has an account', async () => {
    const known = await withPasskey()
    const anonymous = await options()
    const forKnown = await options({ username: known.email })
    const forUnknown = await options({ username: 'nobody@example.test' })
    for (const result of [anonymous, forKnown, forUnknown]) {
      expect(result).toEqual({
        challenge: expect.any(String),
        rpId: 'tenantry.test',
        timeout: anonymous.timeout,
        userVerification: 'required',
        allowCredentials: [],
      })
    }
  })

  it('signs in with a security key (amr hwk) or a synced passkey (amr swk): a new session, no password', async () => {
    for (const [multiDevice, amr] of [
      [false, 'hwk'],
      [true, 'swk'],
    ] as const) {
      const person = await withPasskey(multiDevice)
      const response = await signIn(person.authenticator)
      expect(response.status).toBe(200)
      expect(response.body.ttl).toBe(86_400)
      const claims = decodeJwt(response.body.token)
      expect(claims.sub).toBe(person.id)
      expect(claims.amr).toEqual([amr])
      const sessions = await t.request('GET', '/v1/me/sessions', { token: response.body.token })
      expect(sessions.body.result.find((s: { current: boolean }) => s.current).authMethods).toEqual([amr])
      const factors = await t.request('GET', '/v1/me/factors', { token: response.body.token })
      const passkey = factors.body.result.find((f: { id: string }) => f.id === person.factor.id)
      expect(passkey.lastUsed).not.toBeNull()
    }
  })

  it('refuses an assertion without user verification', async () => {
    const person = await withPasskey()
    const refused = await signIn(person.authenticator, { userVerified: false })
    expect(refused.status).toBe(401)
    expect(refused.body.error.reason).toBe('unauthorized')
    expect((await signIn(person.authenticator)).status).toBe(200)
  })

  it('refuses an assertion from another origin, or for another relying party', async () => {
    const person = await withPasskey()
    expect((await signIn(person.authenticator, { origin: 'https://evil.test' })).status).toBe(401)
    expect((await signIn(person.authenticator, { rpId: 'evil.test' })).status).toBe(401)
  })

  it('refuses an assertion whose user handle names another account than its passkey’s', async () => {
    const person = await withPasskey()
    const other = await insertUser(t.database.handle.db)
    const response = person.authenticator.assert(await options())
    // The user handle is outside the signature: a client could rewrite it to name someone else.
    response.response.userHandle = Buffer.from(other.id.replaceAll('-', ''), 'hex').toString('base64url')
    const refused = await t.request('POST', '/v1/tokens/passkey', { body: { response } })
    expect(refused.status).toBe(401)
    expect((await signIn(person.authenticator)).status).toBe(200)
  })

  it('refuses a signature counter that goes backwards, and audits it', async () => {
    const person = await withPasskey()
    expect((await signIn(person.authenticator, { counter: 7 })).status).toBe(200)
    // A copy of the key still at 3: its assertion is genuinely signed, but the counter went backwards.
    const cloned = await signIn(person.authenticator, { counter: 3 })
    expect(cloned.status).toBe(401)
    const same = await signIn(person.authenticator, { counter: 7 })
    expect(same.status).toBe(401)
    const events = await eventsOf('mfa.passkey_counter_regressed', person.id)
    expect(events).toHaveLength(2)
    expect(events.map((e: { changes: { signCount: number[] } }) => e.changes.signCount)).toContainEqual([
      7, 3,
    ])
    expect((await signIn(person.authenticator, { counter: 8 })).status).toBe(200)
  })

  it('refuses a replayed assertion: each challenge is answered once', async () => {
    const person = await withPasskey(true)
    const response = person.authenticator.assert(await options(), { counter: 0 })
    expect((await t.request('POST', '/v1/tokens/passkey', { body: { response } })).status).toBe(200)
    // A synced passkey keeps no counter (0): only the spent challenge stops the replay.
    const replay = await t.request('POST', '/v1/tokens/passkey', { body: { response } })
    expect(replay.status).toBe(401)
  })

  it('refuses an expired challenge (past 5 minutes)', async () => {
    const person = await withPasskey()
    const response = person.authenticator.assert(await options())
    t.clock.advance(5 * 60_000 + 1)
    expect((await t.request('POST', '/v1/tokens/passkey', { body: { response } })).status).toBe(401)
  })

  it('refuses a disabled person, whose passkey still verifies', async () => {
    const person = await withPasskey()
    await t.request('PUT', `/v1/users/${person.id}`, {
      token: await t.adminToken(),
      body: { status: 'disabled' },
    })
    const refused = await signIn(person.authenticator)
    expect(refused.status).toBe(401)
    expect(refused.body.error.reason).toBe('unauthorized')
  })

  it('refuses an unknown passkey, and names the field of a response that is none', async () => {
    const stranger = authenticatorFor(t.config.publicUrl)
    stranger.register({
      challenge: 'eA',
      rp: { id: 'tenantry.test', name: 'x' },
      user: { id: 'AAAA', name: 'x', displayName: 'x' },
      pubKeyCredParams: [],
    })
    expect((await signIn(stranger)).status).toBe(401)
    const malformed = await t.request('POST', '/v1/tokens/passkey', { body: { response: { id: 'x' } } })
    expect(malformed.status).toBe(400)
    expect(Object.keys(malformed.body.error.attribute).some((f) => f.startsWith('response'))).toBe(true)
  })

  it('reads the large signature of a post-quantum passkey (ML-DSA), and names the field past its largest', async () => {
    // Chromium's passkeys sign with ML-DSA-44 when the options offer it (2,420 bytes: 3,227 characters);
    // a body limit made for ES256 refused them with 400 before the library could check them.
    const person = await withPasskey()
    const withSignature = async (signature: string) => {
      const response = person.authenticator.assert(await options())
      return t.request('POST', '/v1/tokens/passkey', {
        body: { response: { ...response, response: { ...response.response, signature } } },
      })
    }
    const postQuantumSized = await withSignature('A'.repeat(3_227))
    expect(postQuantumSized.status).toBe(401)
    const tooLarge = await withSignature('A'.repeat(SIGNATURE_MAX + 1))
    expect(tooLarge.status).toBe(400)
    expect(Object.keys(tooLarge.body.error.attribute)).toEqual(['response.response.signature'])
  })

  it('limits wrong answers per account like wrong second factors: 429 with Retry-After, audited', async () => {
    const person = await withPasskey()
    for (let attempt = 0; attempt < 10; attempt += 1) {
      expect((await signIn(person.authenticator, { userVerified: false })).status).toBe(401)
    }
    const locked = await signIn(person.authenticator)
    expect(locked.status).toBe(429)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0)
    expect(await eventsOf('mfa.challenge_failed', person.id)).toHaveLength(1)
    t.clock.advance(15 * 60_000 + 1)
    expect((await signIn(person.authenticator)).status).toBe(200)
  })
  it('limits wrong answers per client address like failed logins: 100 a minute, then 429', async () => {
    const person = await withPasskey()
    // Answers to no challenge of the service name no account: only the address counts them.
    const stray = Buffer.from('a challenge the service never issued').toString('base64url')
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const response = person.authenticator.assert(await options(), { challenge: stray })
      expect((await t.request('POST', '/v1/tokens/passkey', { body: { response } })).status).toBe(401)
    }
    const locked = await signIn(person.authenticator)
    expect(locked.status).toBe(429)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0)
    t.clock.advance(60_000 + 1)
    expect((await signIn(person.authenticator)).status).toBe(200)
  })
})
