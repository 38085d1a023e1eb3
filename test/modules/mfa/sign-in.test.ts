import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { insertUser } from '../../helpers/fixtures.js'
import { codeNow, nextStep, passwordStep, personWithTotp, signInWithTotp } from '../../helpers/mfa.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Signing in with a second factor (docs/security.md, "Signing in with a second factor"). */
const t = useTestApp()

describe('signing in with an authenticator app', () => {
  it('asks a right password for the factor, then gives a token whose amr holds pwd and otp', async () => {
    const person = await personWithTotp(t)
    const challenge = await passwordStep(t, person, 600)
    expect(challenge.factors).toEqual(['totp'])
    expect(challenge.token.length).toBeGreaterThanOrEqual(22)
    const response = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: challenge.token, code: codeNow(t, person.secret) },
    })
    expect(response.status).toBe(200)
    expect(response.body.ttl).toBe(600)
    const claims = decodeJwt(response.body.token)
    expect(claims.amr).toEqual(['pwd', 'otp'])
    expect(claims.auth_time).toBe(Math.floor(t.clock.now().getTime() / 1000))
    const login = await t.request('POST', '/v1/login', { token: response.body.token })
    expect(login.body.result.mfa).toBe(true)
    expect(login.body.result.authMethods).toEqual(['pwd', 'otp'])
  })

  it('keeps a wrong password a plain 401 unauthorized, with no challenge', async () => {
    const person = await personWithTotp(t)
    const response = await t.request('POST', '/v1/tokens', {
      body: { username: person.email, password: 'not the password' },
    })
    expect(response.status).toBe(401)
    expect(response.body.error.reason).toBe('unauthorized')
    expect(response.body.error.mfa).toBeUndefined()
  })

  it('signs in a command-line client in one call: username, password and code', async () => {
    const person = await personWithTotp(t)
    const response = await t.request('POST', '/v1/tokens', {
      body: { username: person.email, password: person.password, code: codeNow(t, person.secret) },
    })
    expect(response.status).toBe(200)
    expect(decodeJwt(response.body.token).amr).toEqual(['pwd', 'otp'])
    nextStep(t)
    const wrong = await t.request('POST', '/v1/tokens', {
      body: { username: person.email, password: person.password, code: '000000' },
    })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.reason).toBe('mfa_required')
    expect(wrong.body.error.attribute).toHaveProperty('code')
  })

  it('lets an account without a factor sign in with the password alone; /v1/login says mfa false', async () => {
    const user = await insertUser(t.database.handle.db)
    const token = await t.tokenFor(user.email, user.password)
    expect(decodeJwt(token).amr).toEqual(['pwd'])
    const login = await t.request('POST', '/v1/login', { token })
    expect(login.body.result.mfa).toBe(false)
    expect(login.body.result.authMethods).toEqual(['pwd'])
  })

  it('signs in with a token usable on the API', async () => {
    const person = await personWithTotp(t)
    const token = await signInWithTotp(t, person)
    expect((await t.request('GET', '/v1/me/sessions', { token })).status).toBe(200)
    nextStep(t)
  })
})
