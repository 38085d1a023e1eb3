import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OutboxWorker } from '../../../src/outbox/outbox-worker.js'
import { insertUser } from '../../helpers/fixtures.js'
import { codeNow, nextStep, passwordStep, personWithTotp, totpCode } from '../../helpers/mfa.js'
import { resetTokenIn, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.js'
import { useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * The attacks a second factor at sign-in stands against (docs/security.md, "Signing in with a second
 * factor"), each failing without its defence.
 */
let smtp: TestSmtpServer
const t = useTestApp(async () => {
  smtp = await startSmtpServer()
  return { env: { TENANTRY_SMTP_URL: smtp.url } }
})
let worker: OutboxWorker
beforeAll(() => {
  worker = new OutboxWorker(t.ctx)
  worker.start()
})
afterAll(async () => {
  await worker.stop()
  await smtp.close()
})

const answer = (mfaToken: string, body: Record<string, unknown>) =>
  t.request('POST', '/v1/tokens/mfa', { body: { mfaToken, ...body } })

async function events(action: string, targetId: string) {
  const admin = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
  const response = await t.request('GET', `/v1/audit-events?action=${action}&targetId=${targetId}`, {
    token: admin,
  })
  return response.body.result as Array<{ action: string; changes: Record<string, unknown> }>
}

describe('second factor at sign-in under attack', () => {
  it('refuses a TOTP code replayed within its window, on a new challenge', async () => {
    const person = await personWithTotp(t)
    const code = codeNow(t, person.secret)
    expect((await answer((await passwordStep(t, person)).token, { code })).status).toBe(200)
    // Same code, same 30 seconds: a shoulder-surfed or phished code is worth one sign-in only.
    const replay = await answer((await passwordStep(t, person)).token, { code })
    expect(replay.status).toBe(401)
    expect(replay.body.error.reason).toBe('mfa_required')
    expect(replay.body.error.attribute).toEqual({ code: 'wrong, or already used' })
    // Still the same code 20 s later (within the window either side): refused all the same.
    t.clock.advance(20_000)
    expect((await answer((await passwordStep(t, person)).token, { code })).status).toBe(401)
  })

  it('lets one of two sign-ins racing with the same code win, never both', async () => {
    const person = await personWithTotp(t)
    const [first, second] = [await passwordStep(t, person), await passwordStep(t, person)]
    const code = codeNow(t, person.secret)
    const answers = await Promise.all([answer(first.token, { code }), answer(second.token, { code })])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401])
    nextStep(t)
  })

  it('refuses a code one step outside the window, accepts one inside it', async () => {
    const person = await personWithTotp(t)
    // The step before this one must not be the one the enrolment took.
    nextStep(t)
    const now = t.clock.now().getTime()
    const challenge = await passwordStep(t, person)
    const tooOld = await answer(challenge.token, { code: totpCode(person.secret, now - 60_000) })
    expect(tooOld.status).toBe(401)
    const tooNew = await answer(challenge.token, { code: totpCode(person.secret, now + 60_000) })
    expect(tooNew.status).toBe(401)
    // One step behind (a phone's clock a little slow) is accepted.
    const behind = await answer(challenge.token, { code: totpCode(person.secret, now - 30_000) })
    expect(behind.status).toBe(200)
    nextStep(t)
  })

  it('kills a challenge after five wrong answers: the right code no longer helps', async () => {
    const person = await personWithTotp(t)
    const challenge = await passwordStep(t, person)
    for (let i = 0; i < 4; i += 1) {
      const wrong = await answer(challenge.token, { code: String(100000 + i) })
      expect(wrong.body.error.reason).toBe('mfa_required')
      expect(wrong.body.error.mfa.token).toBe(challenge.token)
    }
    const fifth = await answer(challenge.token, { code: '100009' })
    expect(fifth.status).toBe(401)
    expect(fifth.body.error.reason).toBe('unauthorized')
    const right = await answer(challenge.token, { code: codeNow(t, person.secret) })
    expect(right.status).toBe(401)
    expect(right.body.error.reason).toBe('unauthorized')
  })

  it('limits wrong answers per account: 10 in 15 minutes whatever the challenges, then 429 and an event', async () => {
    const person = await personWithTotp(t)
    for (let i = 0; i < 10; i += 1) {
      // A new challenge every other answer: fresh challenges do not buy more guesses.
      const challenge = i % 2 === 0 ? await passwordStep(t, person) : undefined
      const token = challenge?.token ?? (await passwordStep(t, person)).token
      expect((await answer(token, { code: String(200000 + i) })).status).toBe(401)
    }
    const locked = await answer((await passwordStep(t, person)).token, { code: codeNow(t, person.secret) })
    expect(locked.status).toBe(429)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0)
    // The one-call form is held by the same count.
    const oneCall = await t.request('POST', '/v1/tokens', {
      body: { username: person.email, password: person.password, code: codeNow(t, person.secret) },
    })
    expect(oneCall.status).toBe(429)
    const failed = await events('mfa.challenge_failed', person.id)
    expect(failed).toHaveLength(1)
    // The window ends: the right code signs in again.
    t.clock.advance(15 * 60_000)
    const later = await answer((await passwordStep(t, person)).token, { code: codeNow(t, person.secret) })
    expect(later.status).toBe(200)
    nextStep(t)
  })

  it('spends a challenge once: its token cannot sign in a second time', async () => {
    const person = await personWithTotp(t)
    const challenge = await passwordStep(t, person)
    expect((await answer(challenge.token, { code: codeNow(t, person.secret) })).status).toBe(200)
    nextStep(t)
    const again = await answer(challenge.token, { code: codeNow(t, person.secret) })
    expect(again.status).toBe(401)
    expect(again.body.error.reason).toBe('unauthorized')
  })

  it('binds a challenge to its account: the attacker’s own code does not answer the victim’s', async () => {
    const victim = await personWithTotp(t)
    const attacker = await personWithTotp(t)
    // The attacker knows the victim's password, and holds an authenticator app of its own account.
    const victimChallenge = await passwordStep(t, victim)
    const crossed = await answer(victimChallenge.token, { code: codeNow(t, attacker.secret) })
    expect(crossed.status).toBe(401)
    expect(crossed.body.token).toBeUndefined()
    // And the victim's challenge does not become the attacker's session either way.
    const attackerChallenge = await passwordStep(t, attacker)
    const mine = await answer(attackerChallenge.token, { code: codeNow(t, victim.secret) })
    expect(mine.status).toBe(401)
  })

  it('expires a challenge after five minutes', async () => {
    const person = await personWithTotp(t)
    const challenge = await passwordStep(t, person)
    t.clock.advance(5 * 60_000 + 1000)
    const late = await answer(challenge.token, { code: codeNow(t, person.secret) })
    expect(late.status).toBe(401)
    expect(late.body.error.reason).toBe('unauthorized')
  })

  it('refuses Basic email:password on an account with a factor (401 mfa_required), not on one without', async () => {
    const person = await personWithTotp(t)
    const basic = `Basic ${Buffer.from(`${person.email}:${person.password}`).toString('base64')}`
    const refused = await t.request('GET', '/v1/me/sessions', { authorization: basic })
    expect(refused.status).toBe(401)
    expect(refused.body.error.reason).toBe('mfa_required')
    const plain = await insertUser(t.database.handle.db)
    const plainBasic = `Basic ${Buffer.from(`${plain.email}:${plain.password}`).toString('base64')}`
    expect((await t.request('GET', '/v1/me/sessions', { authorization: plainBasic })).status).toBe(200)
  })

  it('never lets a password reset skip the factor: the new password still meets the challenge', async () => {
    const person = await personWithTotp(t)
    // A challenge won with the old password before the reset does not survive it either.
    const before = await passwordStep(t, person)
    expect(
      (await t.request('PUT', '/v1/request-password-reset', { body: { email: person.email } })).status,
    ).toBeLessThan(300)
    const link = resetTokenIn((await smtp.waitForMailTo(person.email, 1))[0]!)
    t.clock.advance(1000)
    const reset = await t.request('PUT', `/v1/users/${person.id}`, {
      authorization: `Token ${link}`,
      body: { password: 'a new passphrase after reset' },
    })
    expect(reset.status).toBe(200)
    const stale = await answer(before.token, { code: codeNow(t, person.secret) })
    expect(stale.status).toBe(401)
    nextStep(t)
    const after = await t.request('POST', '/v1/tokens', {
      body: { username: person.email, password: 'a new passphrase after reset' },
    })
    expect(after.status).toBe(401)
    expect(after.body.error.reason).toBe('mfa_required')
    const signedIn = await answer(after.body.error.mfa.token, { code: codeNow(t, person.secret) })
    expect(signedIn.status).toBe(200)
    expect(decodeJwt(signedIn.body.token).amr).toEqual(['pwd', 'otp'])
    nextStep(t)
  })
})
