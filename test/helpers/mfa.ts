import { Secret, TOTP } from 'otpauth'
import { expect } from 'vitest'
import { type FixtureUser, insertUser } from './fixtures.js'
import type { TestApp } from './test-app.js'

/** Second factors in tests: codes computed from the secret at the test clock's time, as an app would. */

export function totpCode(secret: string, atMs: number): string {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({
    timestamp: atMs,
  })
}

/** The code an app shows now, by the test clock. */
export function codeNow(t: TestApp, secret: string): string {
  return totpCode(secret, t.clock.now().getTime())
}

/** Moves the clock to the next 30-second step: a code is accepted once per step. */
export function nextStep(t: TestApp): void {
  t.clock.advance(30_000)
}

/** Adds and confirms an authenticator app for the token's person; its factor id and key. */
export async function addTotp(t: TestApp, token: string): Promise<{ factorId: string; secret: string }> {
  const enrolled = await t.request('POST', '/v1/me/factors/totp', { token, body: { name: 'Phone' } })
  expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(201)
  const { id, secret } = enrolled.body.result
  const verified = await t.request('POST', `/v1/me/factors/${id}/verify`, {
    token,
    body: { code: codeNow(t, secret) },
  })
  expect(verified.status, JSON.stringify(verified.body)).toBe(200)
  nextStep(t)
  return { factorId: id, secret }
}

export interface PersonWithTotp extends FixtureUser {
  secret: string
  factorId: string
  /** The password-only token the factor was added with. */
  passwordToken: string
}

/** A new person with a confirmed authenticator app. */
export async function personWithTotp(t: TestApp, roleId?: string): Promise<PersonWithTotp> {
  const user = await insertUser(t.database.handle.db, roleId ? { roleId } : {})
  const passwordToken = await t.tokenFor(user.email, user.password)
  return { ...user, passwordToken, ...(await addTotp(t, passwordToken)) }
}

/** The password step: the challenge of the 401 mfa_required. */
export async function passwordStep(t: TestApp, user: FixtureUser, ttl?: number) {
  const response = await t.request('POST', '/v1/tokens', {
    body: { username: user.email, password: user.password, ...(ttl ? { ttl } : {}) },
  })
  expect(response.status, JSON.stringify(response.body)).toBe(401)
  expect(response.body.error.reason).toBe('mfa_required')
  return response.body.error.mfa as { token: string; factors: string[] }
}

/** Both steps: a token won with the password and the app's current code (then the clock moves a step). */
export async function signInWithTotp(t: TestApp, person: PersonWithTotp): Promise<string> {
  const challenge = await passwordStep(t, person)
  const response = await t.request('POST', '/v1/tokens/mfa', {
    body: { mfaToken: challenge.token, code: codeNow(t, person.secret) },
  })
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  nextStep(t)
  return response.body.token
}
