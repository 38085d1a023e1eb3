import { createHash } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { OutboxWorker } from '../../../src/outbox/outbox-worker.js'
import {
  createTenantAsAdmin,
  insertUser,
  REGION_ID,
  uniqueEmail,
  uniqueName,
} from '../../helpers/fixtures.js'
import { invitationLinkIn, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.js'
import { useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * The life of an invitation token (API.md §4.4): delivered by mail through a real SMTP server, looked up,
 * accepted once, replaced by a resend, killed by a cancel, expired by the clock; stored only as a hash.
 * Also the acceptance page's answers over HTTP (the browser drives it in browser.test.ts).
 */
const DAY_MS = 86_400_000

let smtp: TestSmtpServer
const t = useTestApp(async () => {
  smtp = await startSmtpServer()
  return { env: { TENANTRY_SMTP_URL: smtp.url } }
})
let worker: OutboxWorker
let token: string
let tenant: { id: string; name: string }

beforeAll(async () => {
  worker = new OutboxWorker(t.ctx)
  worker.start()
  token = await t.adminToken()
  tenant = await createTenantAsAdmin(t, { name: uniqueName('Acme <b>&</b> "Co"') })
})
afterAll(async () => {
  await worker.stop()
  await smtp.close()
})
beforeEach(async () => {
  t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime())))
  // Tests move the clock by a day; a fresh administrator token keeps up with it.
  token = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
})

/** A platform user without a password (as the users API or a bulk load creates them). */
async function userWithoutPassword(): Promise<{ id: string; email: string }> {
  const email = uniqueEmail('invitee')
  const response = await t.request('POST', '/v1/users', {
    token,
    body: { email, roleId: ROLE_IDS.platformUser },
  })
  expect(response.status).toBe(201)
  return { id: response.body.result.id, email }
}

/** Invites (or re-sends to) a user and returns the token from the e-mail it receives. */
async function inviteAndReadToken(
  user: { id: string; email: string },
  body: Record<string, unknown> = {},
  resend = false,
): Promise<string> {
  const before = smtp.messages.filter((m) => m.envelopeTo.includes(user.email)).length
  const response = resend
    ? await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
        token,
        body: { status: 'invited' },
      })
    : await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
        token,
        body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited', ...body },
      })
  expect(response.status).toBeLessThan(300)
  const mails = await smtp.waitForMailTo(user.email, before + 1)
  return invitationLinkIn(mails[mails.length - 1]!).token
}

function lookUp(invitationToken: string) {
  return t.request('GET', `/v1/invitations/${encodeURIComponent(invitationToken)}`)
}

function accept(invitationToken: string, body: Record<string, unknown> = {}) {
  return t.request('POST', `/v1/invitations/${encodeURIComponent(invitationToken)}/accept`, { body })
}

async function membership(userId: string) {
  return (await t.request('GET', `/v1/tenants/${tenant.id}/users/${userId}`, { token })).body.result
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url')
}

describe('the token', () => {
  it('is stored only as its SHA-256, and the mail keeps no copy once sent', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    expect(invitationToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const db = t.database.handle.db
    const row = await db
      .selectFrom('tenant_users')
      .selectAll()
      .where('tenant_id', '=', tenant.id)
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow()
    expect(row.invitation_token_hash).toBe(sha256(invitationToken))
    expect(JSON.stringify(row)).not.toContain(invitationToken)
    // Once marked sent, the outbox row holds neither the token nor its encrypted envelope.
    await expect.poll(async () => (await membership(user.id)).invitationEmailStatus).toBe('sent')
    const outbox = await db.selectFrom('outbox').selectAll().where('tenant_id', '=', tenant.id).execute()
    const mine = outbox.filter((r) => (r.payload as { userId: string }).userId === user.id)
    expect(mine).toHaveLength(1)
    expect(mine[0]!.payload).not.toHaveProperty('envelope')
    expect(JSON.stringify(mine)).not.toContain(invitationToken)
    // And the API never shows it.
    expect((await membership(user.id)).invitationToken).toBeNull()
  })

  it('describes the invitation: tenant, role, e-mail, expiry and whether a password is needed', async () => {
    const user = await userWithoutPassword()
    const invitedAt = t.clock.now().getTime()
    const invitationToken = await inviteAndReadToken(user)
    const response = await lookUp(invitationToken)
    expect(response.status).toBe(200)
    expect(response.body.result).toEqual({
      tenantId: tenant.id,
      tenantName: tenant.name,
      email: user.email,
      roleName: 'Agent',
      expiresAt: new Date(invitedAt + DAY_MS).toISOString(),
      needsPassword: true,
    })
  })

  it('works once: the password and names are set, and the user can log in and see the tenant', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user, { roleId: ROLE_IDS.supervisor })
    const accepted = await accept(invitationToken, {
      password: 'a new password',
      firstName: 'Grace',
      lastName: 'Hopper',
    })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result).toMatchObject({
      tenantId: tenant.id,
      userId: user.id,
      status: 'accepted',
      invitationStatus: 'enabled',
      firstName: 'Grace',
      lastName: 'Hopper',
      invitationToken: null,
    })
    expect(accepted.body.result.activeExtension).toEqual(accepted.body.result.extensions[0])

    const session = await t.request('POST', '/v1/tokens', {
      body: { username: user.email, password: 'a new password' },
    })
    expect(session.status).toBe(200)
    const login = await t.request('POST', '/v1/login', { token: session.body.token })
    expect(login.body.result.tenants).toEqual([
      expect.objectContaining({
        tenantId: tenant.id,
        tenantName: tenant.name,
        roleId: ROLE_IDS.supervisor,
        roleName: 'Supervisor',
        tenantPermissions: [
          'VIEW_ALL_USERS',
          'MANAGE_ALL_USERS',
          'MANAGE_TENANT_ENROLLMENT',
          'VIEW_ALL_PROVIDERS',
          'VIEW_ALL_ROLES',
        ],
      }),
    ])

    for (const again of [
      await accept(invitationToken, { password: 'another password' }),
      await lookUp(invitationToken),
    ]) {
      expect(again.status).toBe(404)
      expect(again.body.error.reason).toBe('invitation_not_found')
    }
    // The second attempt changed nothing: the first password still works.
    expect(
      (
        await t.request('POST', '/v1/tokens', {
          body: { username: user.email, password: 'another password' },
        })
      ).status,
    ).toBe(401)
  })

  it('asks a user without a password for one, and leaves the invitation open when it is missing or short', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const missing = await accept(invitationToken)
    expect(missing.status).toBe(400)
    expect(missing.body.error.attribute).toHaveProperty('password')
    const short = await accept(invitationToken, { password: 'short' })
    expect(short.status).toBe(400)
    expect(short.body.error.attribute).toHaveProperty('password')
    expect((await membership(user.id)).status).toBe('invited')
    expect((await accept(invitationToken, { password: 'long enough now' })).status).toBe(200)
  })

  it('never replaces the password of a user who has one', async () => {
    const user = await insertUser(t.database.handle.db)
    const invitationToken = await inviteAndReadToken(user)
    expect((await lookUp(invitationToken)).body.result.needsPassword).toBe(false)
    const accepted = await accept(invitationToken, { password: 'an attacker’s choice', firstName: 'Mallory' })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result.firstName).toBe('')
    expect(
      (await t.request('POST', '/v1/tokens', { body: { username: user.email, password: user.password } }))
        .status,
    ).toBe(200)
  })

  it('asks no password of an SSO-only user (noPassword true)', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user, { noPassword: true })
    expect((await lookUp(invitationToken)).body.result.needsPassword).toBe(false)
    const accepted = await accept(invitationToken)
    expect(accepted.status).toBe(200)
    expect(accepted.body.result.invitationStatus).toBe('sso-only')
  })

  it('answers 404 invitation_not_found to a wrong or malformed token', async () => {
    const wellFormed = Buffer.alloc(32, 1).toString('base64url')
    for (const wrong of [wellFormed, 'abc', 'not a token!', `${wellFormed}x`, wellFormed.repeat(4)]) {
      for (const response of [await lookUp(wrong), await accept(wrong, { password: 'whatever password' })]) {
        expect(response.status).toBe(404)
        expect(response.body.error.reason).toBe('invitation_not_found')
      }
    }
  })
})

describe('resend, cancel and expiry', () => {
  it('resend: a new token and a new window; the first link dies and the second works', async () => {
    const user = await userWithoutPassword()
    const first = await inviteAndReadToken(user)
    const firstExpiry = (await membership(user.id)).invitationExpiryDate
    t.clock.advance(3_600_000)
    const second = await inviteAndReadToken(user, {}, true)
    expect(second).not.toBe(first)
    const record = await membership(user.id)
    expect(new Date(record.invitationExpiryDate).getTime()).toBe(new Date(firstExpiry).getTime() + 3_600_000)
    expect((await lookUp(first)).status).toBe(404)
    expect((await accept(first, { password: 'a fine password' })).status).toBe(404)
    expect((await accept(second, { password: 'a fine password' })).status).toBe(200)
  })

  it('cancel: the link answers 404 and the user is pending again', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const cancelled = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      token,
      body: { status: 'pending' },
    })
    expect(cancelled.status).toBe(200)
    const response = await lookUp(invitationToken)
    expect(response.status).toBe(404)
    expect(response.body.error.reason).toBe('invitation_not_found')
    expect((await accept(invitationToken, { password: 'a fine password' })).status).toBe(404)
    expect((await membership(user.id)).status).toBe('pending')
  })

  it('expires after 24 hours by the clock: 410, `expired`, the page says so; a resend works again', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    t.clock.advance(DAY_MS - 1000)
    expect((await lookUp(invitationToken)).status).toBe(200)
    t.clock.advance(2000) // 24 h + 1 s after the invitation
    token = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
    expect((await membership(user.id)).invitationStatus).toBe('expired')
    const list = await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token })
    expect(list.body.result.find((u: { userId: string }) => u.userId === user.id).invitationStatus).toBe(
      'expired',
    )
    for (const response of [
      await lookUp(invitationToken),
      await accept(invitationToken, { password: 'a fine password' }),
    ]) {
      expect(response.status).toBe(410)
      expect(response.body.error.reason).toBe('invitation_expired')
    }
    const page = await t.request('GET', `/invitations/accept?token=${invitationToken}`)
    expect(page.status).toBe(410)
    expect(page.body).toContain('This invitation has expired')

    const fresh = await inviteAndReadToken(user, {}, true)
    expect((await membership(user.id)).invitationStatus).toBe('invited')
    expect((await lookUp(invitationToken)).status).toBe(404)
    expect((await accept(fresh, { password: 'a fine password' })).status).toBe(200)
  })
})

describe('PUT /v1/tenants/{t}/users/{u} with Authorization: Token <invitation token>', () => {
  it('accepts without a password, for its own membership only, once', async () => {
    const user = await userWithoutPassword()
    const other = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    await inviteAndReadToken(other)
    const put = (userId: string, body: Record<string, unknown>) =>
      t.request('PUT', `/v1/tenants/${tenant.id}/users/${userId}`, {
        authorization: `Token ${invitationToken}`,
        body,
      })

    const wrongUser = await put(other.id, { status: 'accepted' })
    expect(wrongUser.status).toBe(404)
    expect(wrongUser.body.error.reason).toBe('invitation_not_found')
    // Anything but the acceptance with the token is 401 (API.md §10).
    const more = await put(user.id, { status: 'accepted', roleId: ROLE_IDS.administrator })
    expect(more.status).toBe(401)
    expect((await membership(user.id)).status).toBe('invited')

    const accepted = await put(user.id, { status: 'accepted' })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result).toMatchObject({ status: 'accepted', roleId: ROLE_IDS.agent })
    expect((await membership(other.id)).status).toBe('invited')

    const again = await put(user.id, { status: 'accepted' })
    expect(again.status).toBe(404)
    // The token is no credential anywhere else.
    const elsewhere = await t.request('GET', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      authorization: `Token ${invitationToken}`,
    })
    expect(elsewhere.status).toBe(401)
  })
})

describe('the acceptance page over HTTP', () => {
  function postForm(fields: Record<string, string>) {
    return t.request('POST', '/invitations/accept', {
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
  }

  it('names the tenant, role and e-mail, escaped, with safe headers and a form that needs no script', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const page = await t.request('GET', `/invitations/accept?token=${invitationToken}`)
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['cache-control']).toBe('no-store')
    expect(page.headers['referrer-policy']).toBe('no-referrer')
    expect(page.headers['content-security-policy']).toContain("default-src 'none'")
    const body = page.body as string
    expect(body).toContain('Acme &lt;b&gt;&amp;&lt;/b&gt; &quot;Co&quot;')
    expect(body).not.toContain('<b>&</b>')
    expect(body).toContain('Agent')
    expect(body).toContain(user.email)
    expect(body).toMatch(/<form method="post" action="accept">/)
    expect(body).toMatch(/<label for="password">Password<\/label>/)
    expect(body).not.toContain('<script')
  })

  it('shows visible errors tied to their fields, then accepts', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const mismatch = await postForm({
      token: invitationToken,
      password: 'a long password',
      passwordConfirmation: 'another one',
      firstName: 'Alan',
    })
    expect(mismatch.status).toBe(400)
    expect(mismatch.body).toContain('role="alert"')
    expect(mismatch.body).toMatch(
      /id="passwordConfirmation"[^>]*aria-invalid="true"[^>]*aria-describedby="passwordConfirmation-error"/,
    )
    expect(mismatch.body).toContain('Repeat the password does not match the password.')
    expect(mismatch.body).toContain('value="Alan"')
    const short = await postForm({ token: invitationToken, password: 'short', passwordConfirmation: 'short' })
    expect(short.status).toBe(400)
    expect(short.body).toMatch(/id="password-error">Password must be 8–256 characters/)
    expect((await membership(user.id)).status).toBe('invited')

    const done = await postForm({
      token: invitationToken,
      password: 'a long password',
      passwordConfirmation: 'a long password',
      firstName: 'Alan',
      lastName: 'Turing',
    })
    expect(done.status).toBe(200)
    expect(done.body).toContain('You have joined')
    expect(await membership(user.id)).toMatchObject({
      status: 'accepted',
      firstName: 'Alan',
      lastName: 'Turing',
    })
    expect(
      (await t.request('POST', '/v1/tokens', { body: { username: user.email, password: 'a long password' } }))
        .status,
    ).toBe(200)

    const used = await t.request('GET', `/invitations/accept?token=${invitationToken}`)
    expect(used.status).toBe(404)
    expect(used.body).toContain('This invitation has already been accepted')
  })

  it('says a cancelled, replaced or wrong link is not valid', async () => {
    const user = await userWithoutPassword()
    const first = await inviteAndReadToken(user)
    await inviteAndReadToken(user, {}, true)
    for (const url of [
      `/invitations/accept?token=${first}`,
      '/invitations/accept?token=nonsense',
      '/invitations/accept',
    ]) {
      const page = await t.request('GET', url)
      expect(page.status).toBe(404)
      expect(page.body).toContain('This invitation link is not valid')
    }
    const posted = await postForm({
      token: first,
      password: 'a long password',
      passwordConfirmation: 'a long password',
    })
    expect(posted.status).toBe(404)
  })
})

describe('rate limits', () => {
  it('allows 5 invitation e-mails an hour to one user, then 429 with Retry-After', async () => {
    const user = await userWithoutPassword()
    await inviteAndReadToken(user)
    for (let i = 0; i < 4; i++) {
      const resend = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
        token,
        body: { status: 'invited' },
      })
      expect(resend.status).toBe(200)
    }
    const limited = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      token,
      body: { status: 'invited' },
    })
    expect(limited.status).toBe(429)
    expect(limited.body.error.reason).toBe('rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    t.clock.advance(3_600_000)
    expect(
      (
        await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
          token,
          body: { status: 'invited' },
        })
      ).status,
    ).toBe(200)
  })

  it('counts each new invitation as it is written: of 8 concurrent ones to one user, 5 are stored, 3 get 429 and write nothing', async () => {
    const user = await userWithoutPassword()
    const tenants = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const created = await t.request('POST', '/v1/tenants', {
          token,
          body: { name: uniqueName(), regionId: REGION_ID },
        })
        expect(created.status).toBe(201)
        return created.body.result as { id: string }
      }),
    )
    const answers = await Promise.all(
      tenants.map((each) =>
        t.request('POST', `/v1/tenants/${each.id}/users`, {
          token,
          body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
        }),
      ),
    )
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429, 429])
    const refused = answers.filter((a) => a.status === 429)
    for (const answer of refused) {
      expect(answer.body.error.reason).toBe('rate_limited')
      expect(answer.body.error.message).toMatch(/invitation e-mails an hour/)
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0)
    }
    // the refused ones left no membership, no mail and no event behind
    const memberships = await t.ctx.db
      .selectFrom('tenant_users')
      .select('tenant_id')
      .where('user_id', '=', user.id)
      .execute()
    expect(memberships).toHaveLength(5)
    const events = await t.ctx.db
      .selectFrom('audit_events')
      .select('id')
      .where('action', '=', 'membership.invited')
      .where('target_id', '=', user.id)
      .execute()
    expect(events).toHaveLength(5)
    const mails = await t.ctx.db
      .selectFrom('outbox')
      .select('id')
      .where('kind', '=', 'invitation_email')
      .where(({ ref }) => ref('payload', '->>').key('userId'), '=', user.id)
      .execute()
    expect(mails).toHaveLength(5)
  })

  it('stops an address after 30 failed look-ups, even for a good token, and not other addresses', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const from = (address: string, tokenValue: string) =>
      t.app.inject({ method: 'GET', url: `/v1/invitations/${tokenValue}`, remoteAddress: address })
    const wrong = Buffer.alloc(32, 9).toString('base64url')
    for (let i = 0; i < 30; i++) expect((await from('203.0.113.7', wrong)).statusCode).toBe(404)
    const limited = await from('203.0.113.7', invitationToken)
    expect(limited.statusCode).toBe(429)
    expect(limited.json().error.reason).toBe('rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect((await from('203.0.113.8', invitationToken)).statusCode).toBe(200)
  })
})
