import { describe, expect, it } from 'vitest'
import { sweepExpired } from '../../../src/background.js'
import { insertUser } from '../../helpers/fixtures.js'
import {
  addTotp,
  codeNow,
  nextStep,
  passwordStep,
  personWithTotp,
  signInWithTotp,
} from '../../helpers/mfa.js'
import { useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/** A person's own factors and recovery codes (docs/security.md, "Second factors", "Recovery"). */
const t = useTestApp()

async function auditOf(targetId: string) {
  const admin = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
  const response = await t.request('GET', `/v1/audit-events?action=mfa.*&targetId=${targetId}`, {
    token: admin,
  })
  return (response.body.result as Array<{ action: string; changes: Record<string, unknown> }>).reverse()
}

describe('authenticator apps', () => {
  it('enrols: a pending key with its URI and QR code, confirmed by a code, then listed as active', async () => {
    const user = await insertUser(t.database.handle.db)
    const token = await t.tokenFor(user.email, user.password)
    const enrolled = await t.request('POST', '/v1/me/factors/totp', { token, body: {} })
    expect(enrolled.status).toBe(201)
    expect(enrolled.headers['cache-control']).toBe('no-store')
    const { id, status, secret, otpauthUri, qrSvg } = enrolled.body.result
    expect(status).toBe('pending')
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(otpauthUri).toContain(`secret=${secret}`)
    expect(otpauthUri).toMatch(/^otpauth:\/\/totp\/Tenantry:/)
    expect(qrSvg).toMatch(/^<svg/)
    const listed = await t.request('GET', '/v1/me/factors', { token })
    expect(listed.body.result).toEqual([
      expect.objectContaining({ id, type: 'totp', name: 'Authenticator app', status: 'pending' }),
    ])
    // The key is sealed at rest, bound to its factor.
    const row = await t.database.handle.db
      .selectFrom('user_factors')
      .select('totp_secret')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(row.totp_secret)).not.toContain(secret)

    const wrong = await t.request('POST', `/v1/me/factors/${id}/verify`, { token, body: { code: '000000' } })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.attribute).toHaveProperty('code')
    const right = await t.request('POST', `/v1/me/factors/${id}/verify`, {
      token,
      body: { code: codeNow(t, secret) },
    })
    expect(right.status).toBe(200)
    expect(right.body.result).toMatchObject({ id, type: 'totp', status: 'active' })
    expect((await t.request('GET', '/v1/me/factors', { token })).body.result[0].status).toBe('active')
    expect((await auditOf(user.id)).map((e) => e.action)).toEqual(['mfa.factor_added'])
    nextStep(t)
  })

  it('forgets a pending key after ten minutes: it cannot be confirmed, and the sweep removes it', async () => {
    const user = await insertUser(t.database.handle.db)
    const token = await t.tokenFor(user.email, user.password)
    const { id, secret } = (await t.request('POST', '/v1/me/factors/totp', { token, body: {} })).body.result
    t.clock.advance(10 * 60_000 + 1000)
    const late = await t.request('POST', `/v1/me/factors/${id}/verify`, {
      token,
      body: { code: codeNow(t, secret) },
    })
    expect(late.status).toBe(404)
    expect(late.body.error.reason).toBe('factor_not_found')
    expect((await t.request('GET', '/v1/me/factors', { token })).body.result).toEqual([])
    await sweepExpired(t.ctx)
    const rows = await t.database.handle.db
      .selectFrom('user_factors')
      .select('id')
      .where('id', '=', id)
      .execute()
    expect(rows).toEqual([])
  })

  it('keeps a pending factor worth nothing: the password alone still signs in', async () => {
    const user = await insertUser(t.database.handle.db)
    const token = await t.tokenFor(user.email, user.password)
    await t.request('POST', '/v1/me/factors/totp', { token, body: {} })
    expect(await t.tokenFor(user.email, user.password)).toBeTruthy()
  })

  it('does not let one person confirm or remove another’s factor (404)', async () => {
    const owner = await insertUser(t.database.handle.db)
    const other = await insertUser(t.database.handle.db)
    const ownerToken = await t.tokenFor(owner.email, owner.password)
    const otherToken = await t.tokenFor(other.email, other.password)
    const { id, secret } = (await t.request('POST', '/v1/me/factors/totp', { token: ownerToken, body: {} }))
      .body.result
    const verify = await t.request('POST', `/v1/me/factors/${id}/verify`, {
      token: otherToken,
      body: { code: codeNow(t, secret) },
    })
    expect(verify.status).toBe(404)
    expect((await t.request('DELETE', `/v1/me/factors/${id}`, { token: otherToken })).status).toBe(404)
  })

  it('removes a factor with a fresh second factor (mfa.factor_removed); the password alone signs in again', async () => {
    const person = await personWithTotp(t)
    const token = await signInWithTotp(t, person)
    const removed = await t.request('DELETE', `/v1/me/factors/${person.factorId}`, { token })
    expect(removed.status).toBe(204)
    expect((await auditOf(person.id)).map((e) => e.action)).toEqual([
      'mfa.factor_added',
      'mfa.factor_removed',
    ])
    expect(await t.tokenFor(person.email, person.password)).toBeTruthy()
    const again = await t.request('DELETE', `/v1/me/factors/${person.factorId}`, { token })
    expect(again.status).toBe(404)
  })

  it('refuses an API key (403) and a malformed id (400 naming factorId)', async () => {
    const user = await insertUser(t.database.handle.db)
    const token = await t.tokenFor(user.email, user.password)
    const bad = await t.request('DELETE', '/v1/me/factors/not-an-id', { token })
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('factorId')
    const body = await t.request('POST', '/v1/me/factors/totp', { token, body: { name: '' } })
    expect(body.status).toBe(400)
    expect(body.body.error.attribute).toHaveProperty('name')
  })
})

describe('recovery codes', () => {
  it('gives ten codes once, lists them as one entry, signs in with one once (amr rec), and a new set kills the old', async () => {
    const person = await personWithTotp(t)
    const token = await signInWithTotp(t, person)
    const generated = await t.request('POST', '/v1/me/recovery-codes', { token })
    expect(generated.status).toBe(200)
    expect(generated.headers['cache-control']).toBe('no-store')
    const codes: string[] = generated.body.result.codes
    expect(codes).toHaveLength(10)
    expect(new Set(codes).size).toBe(10)
    for (const code of codes) expect(code).toMatch(/^[A-Z2-7]{5}-[A-Z2-7]{5}$/)
    const stored = await t.database.handle.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('user_id', '=', person.id)
      .execute()
    expect(stored.map((r) => r.code_hash).join()).not.toContain(codes[0]!.replace('-', ''))

    const challenge = await passwordStep(t, person)
    expect(challenge.factors).toEqual(['totp', 'recovery'])
    // Typed loosely: lower case, a space instead of the hyphen.
    const typed = codes[0]!.toLowerCase().replace('-', ' ')
    const used = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: challenge.token, recoveryCode: typed },
    })
    expect(used.status).toBe(200)
    const list = await t.request('GET', '/v1/me/factors', { token })
    expect(list.body.result).toContainEqual(
      expect.objectContaining({ id: 'recovery', type: 'recovery', name: 'Recovery codes', remaining: 9 }),
    )

    const fresh = await t.request('POST', '/v1/me/recovery-codes', { token })
    const old = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: (await passwordStep(t, person)).token, recoveryCode: codes[1] },
    })
    expect(old.status).toBe(401)
    const next = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: (await passwordStep(t, person)).token, recoveryCode: fresh.body.result.codes[0] },
    })
    expect(next.status).toBe(200)
    expect((await auditOf(person.id)).map((e) => e.action)).toEqual([
      'mfa.factor_added',
      'mfa.recovery_codes_generated',
      'mfa.recovery_code_used',
      'mfa.recovery_codes_generated',
      'mfa.recovery_code_used',
    ])
  })

  it('refuses a recovery code used twice', async () => {
    const person = await personWithTotp(t)
    const token = await signInWithTotp(t, person)
    const [code] = (await t.request('POST', '/v1/me/recovery-codes', { token })).body.result.codes
    const first = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: (await passwordStep(t, person)).token, recoveryCode: code },
    })
    expect(first.status).toBe(200)
    const second = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: (await passwordStep(t, person)).token, recoveryCode: code },
    })
    expect(second.status).toBe(401)
    expect(second.body.error.attribute).toEqual({ recoveryCode: 'wrong, or already used' })
  })

  it('asks for exactly one answer (400 naming the fields), and refuses a passkey answer without one', async () => {
    const person = await personWithTotp(t)
    const challenge = await passwordStep(t, person)
    const none = await t.request('POST', '/v1/tokens/mfa', { body: { mfaToken: challenge.token } })
    expect(none.status).toBe(400)
    expect(none.body.error.attribute).toHaveProperty('code')
    const two = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: challenge.token, code: '123456', recoveryCode: 'AAAAA-BBBBB' },
    })
    expect(two.status).toBe(400)
    const passkey = await t.request('POST', '/v1/tokens/mfa', {
      body: { mfaToken: challenge.token, webauthn: { id: 'x', type: 'public-key', response: {} } },
    })
    expect(passkey.status).toBe(400)
    expect(passkey.body.error.attribute).toHaveProperty('webauthn')
  })

  it('lets a second authenticator app be added only after a step-up', async () => {
    const person = await personWithTotp(t)
    const token = await signInWithTotp(t, person)
    const second = await addTotp(t, token)
    expect(second.factorId).not.toBe(person.factorId)
    const listed = (await t.request('GET', '/v1/me/factors', { token })).body.result
    expect(listed.filter((f: { type: string }) => f.type === 'totp')).toHaveLength(2)
  })
})
