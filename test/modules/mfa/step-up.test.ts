import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { freshTenant, insertUser, uniqueName } from '../../helpers/fixtures.js'
import { addTotp, codeNow, nextStep, personWithTotp, signInWithTotp } from '../../helpers/mfa.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Step-up (docs/security.md, "Step-up"): sensitive operations need a second factor at most 10 minutes old. */
const t = useTestApp()

const createKey = (tenantId: string, token: string) =>
  t.request('POST', `/v1/tenants/${tenantId}/api-keys`, {
    token,
    body: { name: uniqueName('Key'), roleId: ROLE_IDS.agent },
  })

/** A tenant Administrator with an authenticator app, and its password-only token. */
async function administratorWithTotp() {
  const { tenant, admin } = await freshTenant(t)
  const factor = await addTotp(t, admin.token)
  return { tenant, admin: { ...admin, ...factor } }
}

describe('step-up', () => {
  it('asks a token without a second factor for one, and a fresh token of the same session does the operation', async () => {
    const { tenant, admin } = await administratorWithTotp()
    const refused = await createKey(tenant.id, admin.token)
    expect(refused.status).toBe(401)
    expect(refused.body.error.reason).toBe('reauthentication_required')
    expect(refused.body.error.mfa.factors).toEqual(['totp'])

    t.clock.advance(1000)
    const stepped = await t.request('POST', '/v1/tokens/step-up', {
      token: admin.token,
      body: { code: codeNow(t, admin.secret) },
    })
    expect(stepped.status).toBe(200)
    const before = decodeJwt(admin.token)
    const after = decodeJwt(stepped.body.token)
    expect(after.sid).toBe(before.sid)
    expect(after.exp).toBe(before.exp)
    expect(after.amr).toEqual(['pwd', 'otp'])
    expect(after.auth_time).toBe(Math.floor(t.clock.now().getTime() / 1000))
    expect(stepped.body.ttl).toBe((before.exp as number) - Math.floor(t.clock.now().getTime() / 1000))
    expect((await createKey(tenant.id, stepped.body.token)).status).toBe(201)
    nextStep(t)
  })

  it('refuses a token whose second factor is older than 10 minutes, until it steps up again', async () => {
    const { tenant, admin } = await administratorWithTotp()
    const person = { ...admin, passwordToken: admin.token }
    const token = await signInWithTotp(t, person)
    expect((await createKey(tenant.id, token)).status).toBe(201)
    t.clock.advance(10 * 60_000 + 1000)
    const stale = await createKey(tenant.id, token)
    expect(stale.status).toBe(401)
    expect(stale.body.error.reason).toBe('reauthentication_required')
    const stepped = await t.request('POST', '/v1/tokens/step-up', {
      token,
      body: { mfaToken: stale.body.error.mfa.token, code: codeNow(t, admin.secret) },
    })
    expect(stepped.status).toBe(200)
    expect((await createKey(tenant.id, stepped.body.token)).status).toBe(201)
    nextStep(t)
  })

  it('keeps a stolen password-only session from adding its own authenticator, new codes or removing one', async () => {
    const person = await personWithTotp(t)
    // The thief holds a session won with the password alone.
    const stolen = person.passwordToken
    for (const [method, url] of [
      ['POST', '/v1/me/factors/totp'],
      ['POST', '/v1/me/recovery-codes'],
      ['DELETE', `/v1/me/factors/${person.factorId}`],
    ] as const) {
      const response = await t.request(method, url, {
        token: stolen,
        ...(method === 'POST' ? { body: {} } : {}),
      })
      expect(response.status, url).toBe(401)
      expect(response.body.error.reason).toBe('reauthentication_required')
    }
    const factors = await t.database.handle.db
      .selectFrom('user_factors')
      .select('id')
      .where('user_id', '=', person.id)
      .execute()
    expect(factors).toEqual([{ id: person.factorId }])
  })

  it('counts wrong step-up answers with the sign-in’s: 401s naming the field, then 429', async () => {
    const person = await personWithTotp(t)
    for (let i = 0; i < 10; i += 1) {
      const wrong = await t.request('POST', '/v1/tokens/step-up', {
        token: person.passwordToken,
        body: { code: String(300000 + i) },
      })
      expect(wrong.status).toBe(401)
      expect(wrong.body.error.reason).toBe('reauthentication_required')
      expect(wrong.body.error.attribute).toEqual({ code: 'wrong, or already used' })
      expect(wrong.body.error.mfa.token).toBeTruthy()
    }
    const locked = await t.request('POST', '/v1/tokens/step-up', {
      token: person.passwordToken,
      body: { code: codeNow(t, person.secret) },
    })
    expect(locked.status).toBe(429)
    expect(locked.headers['retry-after']).toBeDefined()
  })

  it('refuses another person’s step-up challenge', async () => {
    const victim = await personWithTotp(t)
    const attacker = await personWithTotp(t)
    const victimChallenge = await t.request('POST', '/v1/me/recovery-codes', { token: victim.passwordToken })
    const crossed = await t.request('POST', '/v1/tokens/step-up', {
      token: attacker.passwordToken,
      body: { mfaToken: victimChallenge.body.error.mfa.token, code: codeNow(t, attacker.secret) },
    })
    expect(crossed.status).toBe(401)
    expect(crossed.body.error.attribute).toHaveProperty('mfaToken')
  })

  it('asks nothing of an account without a factor, nor of an API key', async () => {
    const { tenant, admin } = await freshTenant(t)
    const made = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
      token: admin.token,
      body: { name: uniqueName('Key'), roleId: ROLE_IDS.administrator },
    })
    expect(made.status).toBe(201)
    await addTotp(t, admin.token)
    // The key's creator now has a factor; the key is not a person and is never asked.
    const { id, secret } = made.body.result
    const byKey = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
      body: { name: uniqueName('Key'), roleId: ROLE_IDS.agent },
    })
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(201)
    const stepUp = await t.request('POST', '/v1/tokens/step-up', {
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
      body: { code: '123456' },
    })
    expect(stepUp.status).toBe(403)
  })

  it('guards erasure and identity providers', async () => {
    const operator = await personWithTotp(t, ROLE_IDS.platformAdministrator)
    const target = await insertUser(t.database.handle.db)
    const erase = await t.request('DELETE', `/v1/users/${target.id}`, { token: operator.passwordToken })
    expect(erase.status).toBe(401)
    expect(erase.body.error.reason).toBe('reauthentication_required')
    const { tenant } = await freshTenant(t)
    const provider = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
      token: operator.passwordToken,
      body: {
        name: 'Corporate',
        identityProvider: 'oidc',
        issuer: 'https://idp.example',
        clientId: 'x',
        clientSecret: 'y',
      },
    })
    expect(provider.status).toBe(401)
    expect(provider.body.error.reason).toBe('reauthentication_required')
    const token = await signInWithTotp(t, operator)
    expect((await t.request('DELETE', `/v1/users/${target.id}`, { token })).status).toBe(204)
  })

  it('ends with the session: a revoked session cannot step up', async () => {
    const person = await personWithTotp(t)
    const sid = decodeJwt(person.passwordToken).sid
    const token = await signInWithTotp(t, person)
    expect((await t.request('DELETE', `/v1/me/sessions/${sid}`, { token })).status).toBe(204)
    const late = await t.request('POST', '/v1/tokens/step-up', {
      token: person.passwordToken,
      body: { code: codeNow(t, person.secret) },
    })
    expect(late.status).toBe(401)
    expect(late.body.error.reason).toBe('unauthorized')
  })
})
