import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { insertUser } from '../../helpers/fixtures.js'
import { authenticatorFor, enrolPasskeyOverHttp } from '../../helpers/soft-authenticator.js'
import { createTestApp, useTestApp } from '../../helpers/test-app.js'

/**
 * Enrolling a passkey over HTTP (docs/security.md, "Passkeys"), with real bytes from a software
 * authenticator: the options, the 201, the event — and the attacks on enrolment, each failing without its
 * defence.
 */
const t = useTestApp()

async function person() {
  const user = await insertUser(t.database.handle.db)
  return { ...user, token: await t.tokenFor(user.email, user.password) }
}

const options = (token: string) => t.request('POST', '/v1/me/factors/webauthn/options', { token })
const enrol = (token: string, body: unknown) => t.request('POST', '/v1/me/factors/webauthn', { token, body })

describe('passkey enrolment', () => {
  it('answers creation options for the service’s relying party, user verification required', async () => {
    const me = await person()
    const response = await options(me.token)
    expect(response.status).toBe(200)
    const result = response.body.result
    expect(result.rp).toEqual({ id: 'tenantry.test', name: 'Tenantry' })
    expect(result.user.name).toBe(me.email)
    expect(result.authenticatorSelection).toMatchObject({
      residentKey: 'preferred',
      userVerification: 'required',
    })
    expect(result.excludeCredentials).toEqual([])
    expect(result.challenge).toMatch(/^[A-Za-z0-9_-]{40,}$/)
  })

  it('enrols a passkey: 201 with the factor as the list shows it, Location, and mfa.factor_added', async () => {
    const me = await person()
    const authenticator = authenticatorFor(t.config.publicUrl, true)
    const { body } = await options(me.token)
    const response = await enrol(me.token, {
      name: 'My phone',
      response: authenticator.register(body.result),
    })
    expect(response.status).toBe(201)
    expect(response.body.result).toEqual({
      id: expect.any(String),
      type: 'webauthn',
      name: 'My phone',
      status: 'active',
      created: expect.any(String),
      lastUsed: null,
    })
    expect(response.headers.location).toBe(`/v1/me/factors/${response.body.result.id}`)
    const events = await t.request('GET', `/v1/audit-events?action=mfa.factor_added&targetId=${me.id}`, {
      token: await t.adminToken(),
    })
    expect(events.body.result).toHaveLength(1)
    expect(events.body.result[0].changes.factor[1]).toMatchObject({ type: 'webauthn', name: 'My phone' })
    const list = await t.request('GET', '/v1/me/factors', { token: me.token })
    expect(list.body.result).toContainEqual(response.body.result)
  })

  it('refuses a registration answered to another person’s challenge (400, nothing stored)', async () => {
    const victim = await person()
    const attacker = await person()
    const { body } = await options(victim.token)
    const response = authenticatorFor(t.config.publicUrl).register(body.result)
    const refused = await enrol(attacker.token, { response })
    expect(refused.status).toBe(400)
    expect(refused.body.error.attribute).toHaveProperty('response')
    expect(await passkeysOf(attacker.id)).toBe(0)
    // The victim's challenge was not spent by the attempt: the victim can still enrol with it.
    expect((await enrol(victim.token, { response })).status).toBe(201)
  })

  it('refuses a registration answered to another purpose’s challenge (a passkey sign-in’s)', async () => {
    const me = await person()
    const signIn = await t.request('POST', '/v1/tokens/passkey/options', { body: {} })
    const { body } = await options(me.token)
    // The authenticator signs the creation options, but with the sign-in's challenge.
    const response = authenticatorFor(t.config.publicUrl).register(body.result, {
      challenge: signIn.body.result.challenge,
    })
    const refused = await enrol(me.token, { response })
    expect(refused.status).toBe(400)
    expect(await passkeysOf(me.id)).toBe(0)
  })

  it('refuses a used challenge: each set of options is answered once, right or wrong', async () => {
    const me = await person()
    const { body } = await options(me.token)
    const authenticator = authenticatorFor(t.config.publicUrl)
    const first = await enrol(me.token, {
      response: authenticator.register(body.result, { userVerified: false }),
    })
    expect(first.status).toBe(400)
    // A right answer to the same options comes too late: the challenge was spent by the first.
    const replay = await enrol(me.token, {
      response: authenticatorFor(t.config.publicUrl).register(body.result),
    })
    expect(replay.status).toBe(400)
    expect(replay.body.error.message).toMatch(/no live enrolment challenge/)
    expect(await passkeysOf(me.id)).toBe(0)
  })

  it('refuses a registration without user verification, from another origin or for another relying party', async () => {
    const me = await person()
    for (const wrong of [{ userVerified: false }, { origin: 'https://evil.test' }, { rpId: 'evil.test' }]) {
      const { body } = await options(me.token)
      const response = authenticatorFor(t.config.publicUrl).register(body.result, wrong)
      const refused = await enrol(me.token, { response })
      expect(refused.status, JSON.stringify(wrong)).toBe(400)
      expect(refused.body.error.attribute).toHaveProperty('response')
    }
    expect(await passkeysOf(me.id)).toBe(0)
  })

  it('refuses an expired challenge (past 5 minutes)', async () => {
    const me = await person()
    const { body } = await options(me.token)
    const response = authenticatorFor(t.config.publicUrl).register(body.result)
    t.clock.advance(5 * 60_000 + 1)
    const refused = await enrol(me.token, { response })
    expect(refused.status).toBe(400)
  })

  it('names the field for a response that is no registration, and refuses API keys', async () => {
    const me = await person()
    const malformed = await enrol(me.token, { response: { id: 'x' } })
    expect(malformed.status).toBe(400)
    expect(Object.keys(malformed.body.error.attribute).some((field) => field.startsWith('response'))).toBe(
      true,
    )
  })

  it('asks for a recent second factor to add one to an account that has one (step-up)', async () => {
    const me = await person()
    await enrolPasskeyOverHttp(t, me.token, authenticatorFor(t.config.publicUrl))
    // The password-only token of a person who now has a passkey cannot add another.
    const asked = await options(me.token)
    expect(asked.status).toBe(401)
    expect(asked.body.error.reason).toBe('reauthentication_required')
    expect(asked.body.error.mfa.factors).toContain('webauthn')
    expect(asked.body.error.mfa.webauthn.allowCredentials).toHaveLength(1)
    expect(decodeJwt(me.token).amr).toEqual(['pwd'])
  })
})

describe('the relying party', () => {
  it('warns at start when TENANTRY_PUBLIC_URL names an IP address, which browsers refuse', async () => {
    const byAddress = await createTestApp({ env: { TENANTRY_PUBLIC_URL: 'http://127.0.0.1:8080' } })
    try {
      expect(byAddress.logs.join('')).toContain('browsers refuse it as a WebAuthn relying party')
    } finally {
      await byAddress.close()
    }
    expect(t.logs.join('')).not.toContain('WebAuthn relying party')
  })
})

async function passkeysOf(userId: string): Promise<number> {
  const rows = await t.database.handle.db
    .selectFrom('user_factors')
    .select('id')
    .where('user_id', '=', userId)
    .where('type', '=', 'webauthn')
    .execute()
  return rows.length
}
