import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { insertUser } from '../../helpers/fixtures.js'
import { authenticatorFor, enrolPasskeyOverHttp } from '../../helpers/soft-authenticator.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * A passkey as the second factor of a password sign-in and of a step-up (docs/security.md, "Passkeys"):
 * the mfa_required challenge carries request options over the account's passkeys, POST /v1/tokens/mfa
 * and /v1/tokens/step-up take the assertion — and refuse it from another account or without user
 * verification.
 */
const t = useTestApp()

async function withPasskey(multiDevice = false) {
  const user = await insertUser(t.database.handle.db)
  const token = await t.tokenFor(user.email, user.password)
  const authenticator = authenticatorFor(t.config.publicUrl, multiDevice)
  await enrolPasskeyOverHttp(t, token, authenticator)
  return { ...user, token, authenticator }
}

async function challenge(person: { email: string; password: string }) {
  const response = await t.request('POST', '/v1/tokens', {
    body: { username: person.email, password: person.password },
  })
  expect(response.status).toBe(401)
  expect(response.body.error.reason).toBe('mfa_required')
  return response.body.error.mfa
}

describe('a passkey as the second factor', () => {
  it('is offered by the mfa_required challenge, and answers it: amr pwd + hwk, or pwd + swk', async () => {
    for (const [multiDevice, amr] of [
      [false, 'hwk'],
      [true, 'swk'],
    ] as const) {
      const person = await withPasskey(multiDevice)
      const mfa = await challenge(person)
      expect(mfa.factors).toContain('webauthn')
      expect(mfa.webauthn).toMatchObject({ rpId: 'tenantry.test', userVerification: 'required' })
      expect(mfa.webauthn.allowCredentials.map((c: { id: string }) => c.id)).toEqual(
        person.authenticator.credentialIds,
      )
      const answered = await t.request('POST', '/v1/tokens/mfa', {
        body: { mfaToken: mfa.token, webauthn: person.authenticator.assert(mfa.webauthn) },
      })
      expect(answered.status).toBe(200)
      expect(decodeJwt(answered.body.token).amr).toEqual(['pwd', amr])
    }
  })

  it('refuses an assertion without user verification, or by another account’s passkey', async () => {
    const person = await withPasskey()
    const other = await withPasskey()
    const mfa = await challenge(person)
    const unverified = await t.request('POST', '/v1/tokens/mfa', {
      body: {
        mfaToken: mfa.token,
        webauthn: person.authenticator.assert(mfa.webauthn, { userVerified: false }),
      },
    })
    expect(unverified.status).toBe(401)
    // The other account's passkey signs this challenge perfectly well; it is still not this account's.
    const foreign = other.authenticator.assert({ ...mfa.webauthn, allowCredentials: [] })
    const refused = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: mfa.token, webauthn: foreign },
    })
    expect(refused.status).toBe(401)
    const right = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: mfa.token, webauthn: person.authenticator.assert(mfa.webauthn) },
    })
    expect(right.status).toBe(200)
  })

  it('refuses a counter going backwards at the second step too, and audits it', async () => {
    const person = await withPasskey()
    let mfa = await challenge(person)
    const first = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: mfa.token, webauthn: person.authenticator.assert(mfa.webauthn, { counter: 20 }) },
    })
    expect(first.status).toBe(200)
    mfa = await challenge(person)
    const cloned = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: mfa.token, webauthn: person.authenticator.assert(mfa.webauthn, { counter: 4 }) },
    })
    expect(cloned.status).toBe(401)
    const events = await t.request(
      'GET',
      `/v1/audit-events?action=mfa.passkey_counter_regressed&targetId=${person.id}`,
      {
        token: await t.adminToken(),
      },
    )
    expect(events.body.result).toHaveLength(1)
  })

  it('steps a session up: reauthentication_required carries options, the assertion earns a fresh token', async () => {
    const person = await withPasskey(true)
    const asked = await t.request('POST', '/v1/me/factors/webauthn/options', { token: person.token })
    expect(asked.status).toBe(401)
    expect(asked.body.error.reason).toBe('reauthentication_required')
    const mfa = asked.body.error.mfa
    const stepped = await t.request('POST', '/v1/tokens/step-up', {
      token: person.token,
      body: { mfaToken: mfa.token, webauthn: person.authenticator.assert(mfa.webauthn) },
    })
    expect(stepped.status).toBe(200)
    const fresh = stepped.body.token
    expect(decodeJwt(fresh).amr).toContain('swk')
    expect(decodeJwt(fresh).sid).toBe(decodeJwt(person.token).sid)
    // With it, a second passkey can be added.
    const second = authenticatorFor(t.config.publicUrl)
    await enrolPasskeyOverHttp(t, fresh, second)
    const factors = await t.request('GET', '/v1/me/factors', { token: fresh })
    expect(factors.body.result.filter((f: { type: string }) => f.type === 'webauthn')).toHaveLength(2)
  })
})
