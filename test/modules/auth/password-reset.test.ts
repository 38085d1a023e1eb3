import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { OutboxWorker } from '../../../src/outbox/outbox-worker.js'
import {
  createTenantAsAdmin,
  insertMembership,
  insertUser,
  memberWithToken,
  uniqueEmail,
} from '../../helpers/fixtures.js'
import { resetTokenIn, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.js'
import { createTestApp, useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * Password reset (docs/api.md#passwords-and-the-existing-clients-flows) as the clients run it: the request, the mail at a real SMTP server, the
 * admin UI's `PUT /v1/users/{id} {password}` with `Authorization: Token <reset token>`, the
 * administrator's `{"resetPassword": true}`, and every way a link stops working.
 */
const HOUR_MS = 3_600_000

let smtp: TestSmtpServer
const t = useTestApp(async () => {
  smtp = await startSmtpServer()
  return { env: { TENANTRY_SMTP_URL: smtp.url } }
})
let worker: OutboxWorker
let admin: string

beforeAll(async () => {
  worker = new OutboxWorker(t.ctx)
  worker.start()
})
afterAll(async () => {
  await worker.stop()
  await smtp.close()
})
beforeEach(async () => {
  // Two hours on: every request limit of the previous test has run out.
  t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime()) + 2 * HOUR_MS))
  admin = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
})

function requestReset(email: string, method = 'PUT') {
  return t.request(method, '/v1/request-password-reset', { body: { email } })
}

async function resetMail(email: string, count: number): Promise<string> {
  const mails = await smtp.waitForMailTo(email, count)
  return resetTokenIn(mails[count - 1]!)
}

function setPassword(userId: string, resetToken: string, body: Record<string, unknown>) {
  return t.request('PUT', `/v1/users/${userId}`, { authorization: `Token ${resetToken}`, body })
}

async function auditActions(targetId: string) {
  return t.database.handle.db
    .selectFrom('audit_events')
    .select(['action', 'changes', 'actor_type', 'actor_id'])
    .where('target_id', '=', targetId)
    .orderBy('occurred')
    .execute()
}

describe('PUT|POST /v1/request-password-reset', () => {
  it('mails a known user a link; an unknown address gets the same answer in the same time and no mail', async () => {
    const user = await insertUser(t.database.handle.db)
    // Warm both paths up first: the first transaction of a process pays for compiling its code.
    const warm = await insertUser(t.database.handle.db)
    await requestReset(warm.email)
    await requestReset(uniqueEmail('warm'))
    const started = performance.now()
    const known = await requestReset(user.email.toUpperCase())
    const knownMs = performance.now() - started
    const unknownStart = performance.now()
    const unknown = await requestReset(uniqueEmail('nobody'), 'POST')
    const unknownMs = performance.now() - unknownStart
    expect(known.status).toBe(200)
    expect(unknown.status).toBe(200)
    expect(known.body).toEqual({ result: {} })
    expect(unknown.body).toEqual(known.body)
    // The attack: telling accounts apart by the time of the answer. Both wait out the same floor (250 ms;
    // the work behind a known address takes a few ms when the machine is not saturated).
    expect(knownMs).toBeGreaterThanOrEqual(245)
    expect(unknownMs).toBeGreaterThanOrEqual(245)
    expect(Math.abs(knownMs - unknownMs)).toBeLessThan(250)

    const mails = await smtp.waitForMailTo(user.email, 1)
    expect(smtp.messages.filter((m) => m.envelopeTo.some((to) => to.startsWith('nobody')))).toEqual([])
    expect(mails[0]!.subject).toBe('Reset your Tenantry password')
    expect(mails[0]!.text).toContain('http://tenantry.test/password-reset?token=')
    const read = await t.request('GET', `/v1/users/${user.id}`, { token: admin })
    expect(read.body.result.resetPasswordExpiryDate).toBe(
      new Date(t.clock.now().getTime() + HOUR_MS).toISOString(),
    )
    expect(['queued', 'sent']).toContain(read.body.result.resetPasswordEmailStatus)
    // Stored hashed: the token from the mail is nowhere in the database.
    const token = resetTokenIn(mails[0]!)
    const row = await t.database.handle.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(row)).not.toContain(token)
    const outbox = await t.database.handle.db.selectFrom('outbox').select('payload').execute()
    expect(JSON.stringify(outbox)).not.toContain(token)
    const events = await auditActions(user.id)
    expect(events.map((e) => e.action)).toContain('user.password_reset_requested')
  })

  it('limits requests per e-mail (known or not) with 429 and Retry-After', async () => {
    const user = await insertUser(t.database.handle.db)
    const stranger = uniqueEmail('stranger')
    for (let i = 0; i < 5; i += 1) {
      expect((await requestReset(user.email)).status).toBe(200)
      expect((await requestReset(stranger)).status).toBe(200)
    }
    for (const email of [user.email, stranger]) {
      const limited = await requestReset(email)
      expect(limited.status).toBe(429)
      expect(limited.body.error.reason).toBe('rate_limited')
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    }
  })

  it('limits requests per client address', async () => {
    const from = (remoteAddress: string, email: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/request-password-reset',
        remoteAddress,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ email }),
      })
    for (let i = 0; i < 30; i += 1)
      expect((await from('192.0.2.7', uniqueEmail('spray'))).statusCode).toBe(200)
    const limited = await from('192.0.2.7', uniqueEmail('spray'))
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['retry-after']).toBeDefined()
    expect((await from('192.0.2.8', uniqueEmail('spray'))).statusCode).toBe(200)
  })

  it('does nothing for a disabled user', async () => {
    const user = await insertUser(t.database.handle.db, { status: 'disabled' })
    expect((await requestReset(user.email)).status).toBe(200)
    const read = await t.request('GET', `/v1/users/${user.id}`, { token: admin })
    expect(read.body.result.resetPasswordExpiryDate).toBeNull()
  })
})

describe('the reset token with PUT /v1/users/{id} (the admin UI)', () => {
  it('sets the password once, ends older access tokens, and the new password logs in', async () => {
    const user = await insertUser(t.database.handle.db)
    const before = await t.tokenFor(user.email, user.password)
    expect((await requestReset(user.email)).status).toBe(200)
    const resetToken = await resetMail(user.email, 1)
    t.clock.advance(1000)

    expect(
      (await t.request('GET', `/v1/users/${user.id}`, { authorization: `Token ${resetToken}` })).status,
    ).toBe(200)
    const set = await setPassword(user.id, resetToken, { password: 'a brand new secret' })
    expect(set.status).toBe(200)
    expect(set.body.result).toMatchObject({ id: user.id, hasPassword: true, resetPasswordExpiryDate: null })
    expect((await t.request('POST', '/v1/login', { token: before })).status).toBe(401)
    await t.tokenFor(user.email, 'a brand new secret')
    const old = await t.request('POST', '/v1/tokens', {
      body: { username: user.email, password: user.password },
    })
    expect(old.status).toBe(401)

    const again = await setPassword(user.id, resetToken, { password: 'another new secret' })
    expect(again.status).toBe(401)
    expect(again.body.error.reason).toBe('unauthorized')
    const events = await auditActions(user.id)
    const changed = events.find((e) => e.action === 'user.password_changed')
    expect(changed).toMatchObject({ actor_type: 'user', actor_id: user.id })
    expect(changed?.changes).toMatchObject({ password: ['********', '********'] })
    expect(JSON.stringify(events)).not.toContain('a brand new secret')
  })

  it('a newer link kills the older; an expired one is 401 reset_token_expired', async () => {
    const user = await insertUser(t.database.handle.db)
    await requestReset(user.email)
    const first = await resetMail(user.email, 1)
    await requestReset(user.email)
    const second = await resetMail(user.email, 2)
    expect(second).not.toBe(first)
    const replaced = await setPassword(user.id, first, { password: 'replaced link pw' })
    expect(replaced.status).toBe(401)
    expect(replaced.body.error.reason).toBe('unauthorized')

    t.clock.advance(HOUR_MS + 1000)
    const expired = await setPassword(user.id, second, { password: 'expired link pw' })
    expect(expired.status).toBe(401)
    expect(expired.body.error.reason).toBe('reset_token_expired')
    expect(expired.headers['www-authenticate']).toBeDefined()
  })

  it('works only for its own user and only for the password', async () => {
    const user = await insertUser(t.database.handle.db)
    const other = await insertUser(t.database.handle.db)
    await requestReset(user.email)
    const resetToken = await resetMail(user.email, 1)
    expect((await setPassword(other.id, resetToken, { password: 'not for you pw' })).status).toBe(401)
    expect(
      (await t.request('GET', `/v1/users/${other.id}`, { authorization: `Token ${resetToken}` })).status,
    ).toBe(401)
    const escalate = await setPassword(user.id, resetToken, {
      password: 'mine again pw',
      roleId: ROLE_IDS.platformAdministrator,
    })
    expect(escalate.status).toBe(401)
    const read = await t.request('GET', `/v1/users/${user.id}`, { token: admin })
    expect(read.body.result.roleId).toBe(ROLE_IDS.platformUser)
    // Still live after the refused attempts.
    expect((await setPassword(user.id, resetToken, { password: 'mine again pw' })).status).toBe(200)
  })
})

describe('PUT /v1/users/{id} {"resetPassword": true} (an administrator)', () => {
  it('queues the mail and shows the link’s expiry; within MANAGE_ALL_USERS and the ceiling only', async () => {
    const tenant = await createTenantAsAdmin(t)
    const user = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: user.id,
      roleId: ROLE_IDS.agent,
    })
    const platformAdmin = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: platformAdmin.id,
      roleId: ROLE_IDS.agent,
    })
    const outsider = await insertUser(t.database.handle.db)
    const tenantAdmin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)

    const reset = await t.request('PUT', `/v1/users/${user.id}`, {
      token: tenantAdmin.token,
      body: { resetPassword: true },
    })
    expect(reset.status).toBe(200)
    expect(reset.body.result.resetPasswordExpiryDate).toBe(
      new Date(t.clock.now().getTime() + HOUR_MS).toISOString(),
    )
    expect(reset.body.result.resetPasswordEmailStatus).toBe('queued')
    const mail = (await smtp.waitForMailTo(user.email, 1))[0]!
    expect(mail.text).toContain('asked for the password of this account to be reset')
    expect((await setPassword(user.id, resetTokenIn(mail), { password: 'set by the link' })).status).toBe(200)

    const ceiling = await t.request('PUT', `/v1/users/${platformAdmin.id}`, {
      token: tenantAdmin.token,
      body: { resetPassword: true },
    })
    expect(ceiling.status).toBe(403)
    expect(ceiling.body.error.reason).toBe('role_exceeds_caller')
    const noPermission = await t.request('PUT', `/v1/users/${user.id}`, {
      token: agent.token,
      body: { resetPassword: true },
    })
    expect(noPermission.status).toBe(403)
    const unseen = await t.request('PUT', `/v1/users/${outsider.id}`, {
      token: tenantAdmin.token,
      body: { resetPassword: true },
    })
    expect(unseen.status).toBe(404)
    for (const target of [platformAdmin, outsider]) {
      const read = await t.request('GET', `/v1/users/${target.id}`, { token: admin })
      expect(read.body.result.resetPasswordExpiryDate).toBeNull()
    }
  })

  it('writes one event for the user when the same PUT also edits the profile (docs/webhooks.md)', async () => {
    const user = await insertUser(t.database.handle.db)
    const before = (await auditActions(user.id)).length

    const response = await t.request('PUT', `/v1/users/${user.id}`, {
      token: admin,
      body: { firstName: 'Grace', resetPassword: true },
    })
    expect(response.status).toBe(200)
    const expiry = response.body.result.resetPasswordExpiryDate as string
    expect(expiry).toBe(new Date(t.clock.now().getTime() + HOUR_MS).toISOString())
    const events = (await auditActions(user.id)).slice(before)
    expect(events.map(({ action, changes }) => ({ action, changes }))).toEqual([
      {
        action: 'user.password_reset_requested',
        changes: { firstName: ['', 'Grace'], resetPasswordExpiryDate: [null, expiry] },
      },
    ])
    // Written with the event: the link, whose mail arrives and sets the password.
    const mail = (await smtp.waitForMailTo(user.email, 1))[0]!
    expect((await setPassword(user.id, resetTokenIn(mail), { password: 'set by the link' })).status).toBe(200)
  })
})

describe('TENANTRY_PASSWORD_RESET_URL', () => {
  it('makes the link from the template, URL-encoded', async () => {
    const local = await createTestApp({
      env: {
        TENANTRY_SMTP_URL: smtp.url,
        TENANTRY_PASSWORD_RESET_URL: 'https://admin.example.com/#/reset?user={userId}&t={token}',
      },
    })
    const localWorker = new OutboxWorker(local.ctx)
    localWorker.start()
    try {
      const user = await insertUser(local.database.handle.db)
      expect(
        (await local.request('PUT', '/v1/request-password-reset', { body: { email: user.email } })).status,
      ).toBe(200)
      const [mail] = await smtp.waitForMailTo(user.email, 1)
      expect(mail!.text).toMatch(
        new RegExp(`https://admin\\.example\\.com/#/reset\\?user=${user.id}&t=[A-Za-z0-9_-]{43}`),
      )
    } finally {
      await localWorker.stop()
      await local.close()
    }
  })
})
