import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { OutboxWorker } from '../../../src/outbox/outbox-worker.js'
import { createTenantAsAdmin, insertMembership, insertUser, uniqueEmail } from '../../helpers/fixtures.js'
import { resetTokenIn, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.js'
import { useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * The one-time tokens as credentials (docs/api.md#passwords-and-the-existing-clients-flows). The older admin UI onboards a person with the
 * invitation token from a link to its own page (TENANTRY_INVITATION_URL); existing users accept with their
 * own login. Both tokens are refused on every other route of the app.
 */
const DAY_MS = 86_400_000
const UI_LINK = 'https://admin.example.test/#/invite-accept?userId={userId}&tenantId={tenantId}&token={token}'

let smtp: TestSmtpServer
const t = useTestApp(async () => {
  smtp = await startSmtpServer()
  return { env: { TENANTRY_SMTP_URL: smtp.url, TENANTRY_INVITATION_URL: UI_LINK } }
})
let worker: OutboxWorker
let admin: string
let tenant: { id: string; name: string }

beforeAll(async () => {
  worker = new OutboxWorker(t.ctx)
  worker.start()
  tenant = await createTenantAsAdmin(t)
})
afterAll(async () => {
  await worker.stop()
  await smtp.close()
})
beforeEach(async () => {
  t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime()) + 2 * 3_600_000))
  admin = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
})

/** Creates a user without a password, invites it, and reads the link of the UI's page from the mail. */
async function invitedNewUser(): Promise<{ id: string; email: string; token: string; link: string }> {
  const email = uniqueEmail('onboard')
  const created = await t.request('POST', '/v1/users', {
    token: admin,
    body: { email, roleId: ROLE_IDS.platformUser },
  })
  expect(created.status).toBe(201)
  const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
    token: admin,
    body: { email, roleId: ROLE_IDS.agent, status: 'invited' },
  })
  expect(invited.status).toBe(201)
  const [mail] = await smtp.waitForMailTo(email, 1)
  const link = /https:\/\/admin\.example\.test\/\S+/.exec(mail!.text)?.[0] ?? ''
  const token = new URLSearchParams(link.split('?')[1]).get('token') ?? ''
  return { id: created.body.result.id, email, token, link }
}

describe('the older admin UI’s onboarding, replayed', () => {
  it('mail → GET user → PUT names and password → PUT status accepted → POST /v1/tokens → POST /v1/login', async () => {
    const user = await invitedNewUser()
    expect(user.link).toBe(
      UI_LINK.replace('{userId}', user.id).replace('{tenantId}', tenant.id).replace('{token}', user.token),
    )
    const auth = { authorization: `Token ${user.token}` }

    const read = await t.request('GET', `/v1/users/${user.id}`, auth)
    expect(read.status).toBe(200)
    expect(read.body.result).toMatchObject({ id: user.id, email: user.email, hasPassword: false })

    const profile = await t.request('PUT', `/v1/users/${user.id}`, {
      ...auth,
      body: { firstName: 'Ada', lastName: 'Lovelace', password: 'analytical engine' },
    })
    expect(profile.status).toBe(200)
    expect(profile.body.result).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace', hasPassword: true })
    // The first password is set once: the token cannot replace it.
    const again = await t.request('PUT', `/v1/users/${user.id}`, {
      ...auth,
      body: { password: 'a second password' },
    })
    expect(again.status).toBe(401)

    const accepted = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      ...auth,
      body: { status: 'accepted' },
    })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result).toMatchObject({
      status: 'accepted',
      roleName: 'Agent',
      platformStatus: 'enabled',
    })

    const login = await t.request('POST', '/v1/login', {
      token: await t.tokenFor(user.email, 'analytical engine'),
    })
    expect(login.status).toBe(200)
    expect(login.body.result.tenants.map((x: { tenantId: string }) => x.tenantId)).toEqual([tenant.id])
    // Accepted: the token is spent.
    expect((await t.request('GET', `/v1/users/${user.id}`, auth)).status).toBe(401)

    const events = await t.database.handle.db
      .selectFrom('audit_events')
      .select(['action', 'changes'])
      .where('target_id', '=', user.id)
      .execute()
    expect(events).toContainEqual({
      action: 'user.password_changed',
      changes: { firstName: ['', 'Ada'], lastName: ['', 'Lovelace'], password: [null, '********'] },
    })
  })

  it('reaches nothing but its own user, and answers 410 once expired', async () => {
    const user = await invitedNewUser()
    const other = await insertUser(t.database.handle.db)
    const auth = { authorization: `Token ${user.token}` }
    expect((await t.request('GET', `/v1/users/${other.id}`, auth)).status).toBe(401)
    expect(
      (await t.request('PUT', `/v1/users/${other.id}`, { ...auth, body: { firstName: 'X' } })).status,
    ).toBe(401)
    const escalate = await t.request('PUT', `/v1/users/${user.id}`, {
      ...auth,
      body: { firstName: 'Eve', roleId: ROLE_IDS.platformAdministrator },
    })
    expect(escalate.status).toBe(401)
    const more = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      ...auth,
      body: { status: 'accepted', roleId: ROLE_IDS.administrator },
    })
    expect(more.status).toBe(401)
    const read = await t.request('GET', `/v1/tenants/${tenant.id}/users/${user.id}`, { token: admin })
    expect(read.body.result).toMatchObject({ status: 'invited', roleId: ROLE_IDS.agent, firstName: '' })

    t.clock.advance(DAY_MS + 1000)
    for (const response of [
      await t.request('GET', `/v1/users/${user.id}`, auth),
      await t.request('PUT', `/v1/users/${user.id}`, { ...auth, body: { firstName: 'Late' } }),
      await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
        ...auth,
        body: { status: 'accepted' },
      }),
    ]) {
      expect(response.status).toBe(410)
      expect(response.body.error.reason).toBe('invitation_expired')
    }
  })
})

describe('an existing user accepts with its own login', () => {
  it('accepts its own live invitation without enrolment permission, and nothing else', async () => {
    const user = await insertUser(t.database.handle.db)
    const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin,
      body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(invited.status).toBe(201)
    const own = await t.tokenFor(user.email, user.password)
    const url = `/v1/tenants/${tenant.id}/users/${user.id}`
    const promote = await t.request('PUT', url, {
      token: own,
      body: { status: 'accepted', roleId: ROLE_IDS.administrator },
    })
    // Not a member yet: the tenant is not visible to it, and a role change needs enrolment permission.
    expect([403, 404]).toContain(promote.status)

    const accepted = await t.request('PUT', url, { token: own, body: { status: 'accepted' } })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result).toMatchObject({ status: 'accepted', roleId: ROLE_IDS.agent })
    const login = await t.request('POST', '/v1/login', { token: own })
    expect(login.body.result.tenants.map((x: { tenantId: string }) => x.tenantId)).toContain(tenant.id)
    // Accepted already: a further change is an ordinary one, which needs enrolment permission (an Agent
    // has none).
    const disable = await t.request('PUT', url, { token: own, body: { status: 'disabled' } })
    expect(disable.status).toBe(403)

    // Someone else's invitation cannot be accepted this way.
    const invitee = await insertUser(t.database.handle.db)
    await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin,
      body: { email: invitee.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    const stranger = await insertUser(t.database.handle.db)
    const strangerToken = await t.tokenFor(stranger.email, stranger.password)
    const theirs = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${invitee.id}`, {
      token: strangerToken,
      body: { status: 'accepted' },
    })
    expect([403, 404]).toContain(theirs.status)
  })

  it('answers 410 for its own expired invitation', async () => {
    const user = await insertUser(t.database.handle.db)
    await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin,
      body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    t.clock.advance(DAY_MS + 1000)
    const own = await t.tokenFor(user.email, user.password)
    const late = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      token: own,
      body: { status: 'accepted' },
    })
    expect(late.status).toBe(410)
    expect(late.body.error.reason).toBe('invitation_expired')
  })
})

describe('both narrow credentials against every other route of the app', () => {
  it('is 401 everywhere but the routes docs/api.md#passwords-and-the-existing-clients-flows opens to it', async () => {
    const invitee = await invitedNewUser()
    const resetUser = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: resetUser.id,
      roleId: ROLE_IDS.administrator,
    })
    await t.request('PUT', '/v1/request-password-reset', { body: { email: resetUser.email } })
    const resetToken = resetTokenIn((await smtp.waitForMailTo(resetUser.email, 1))[0]!)

    const document = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { security?: unknown[] }>>
    }
    const allowed = new Set([
      'GET /v1/users/{userId}',
      'PUT /v1/users/{userId}',
      'PUT /v1/tenants/{tenantId}/users/{userId}',
    ])
    const tried: string[] = []
    for (const [path, operations] of Object.entries(document.paths)) {
      if (!path.startsWith('/v1/')) continue // health and docs take no credentials at all
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method.toUpperCase()} ${path}`
        if (allowed.has(route)) continue
        if (Array.isArray(operation.security) && operation.security.length === 0) continue // public
        for (const [credential, userId] of [
          [invitee.token, invitee.id],
          [resetToken, resetUser.id],
        ] as const) {
          // The token's own tenant and user wherever the path names them: the best case for the token.
          const url = path
            .replace('{tenantId}', tenant.id)
            .replace('{userId}', userId)
            .replace(/\{[^}]+\}/g, '0196f1e2-0000-7000-8000-000000000001')
          const response = await t.request(method.toUpperCase(), url, {
            authorization: `Token ${credential}`,
            ...(method === 'get' || method === 'delete' ? {} : { body: {} }),
          })
          expect(response.status, `${route} with a one-time token`).toBe(401)
        }
        tried.push(route)
      }
    }
    expect(tried.length).toBeGreaterThan(20)
    // The reset token on the acceptance route, and the invitation token on the other user: 401 too.
    const resetOnAccept = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${resetUser.id}`, {
      authorization: `Token ${resetToken}`,
      body: { status: 'accepted' },
    })
    expect(resetOnAccept.status).toBe(401)
    // Both tokens are still live after all that: nothing above spent them.
    expect(
      (await t.request('GET', `/v1/users/${invitee.id}`, { authorization: `Token ${invitee.token}` })).status,
    ).toBe(200)
    expect(
      (await t.request('GET', `/v1/users/${resetUser.id}`, { authorization: `Token ${resetToken}` })).status,
    ).toBe(200)
  })
})

describe('If-Match with an invitation token', () => {
  it('is checked in the write of the user’s names and of the acceptance: a stale one is 412, nothing stored', async () => {
    const user = await invitedNewUser()
    const auth = { authorization: `Token ${user.token}` }
    const userUrl = `/v1/users/${user.id}`
    const read = await t.request('GET', userUrl, auth)
    const etag = String(read.headers.etag)
    const named = await t.request('PUT', userUrl, {
      ...auth,
      headers: { 'if-match': etag },
      body: { firstName: 'Ada' },
    })
    expect(named.status).toBe(200)
    const stale = await t.request('PUT', userUrl, {
      ...auth,
      headers: { 'if-match': etag },
      body: { firstName: 'Eve' },
    })
    expect(stale.status).toBe(412)
    expect(stale.body.error.reason).toBe('precondition_failed')
    // The same names again write nothing; the stale If-Match is still refused.
    const same = await t.request('PUT', userUrl, {
      ...auth,
      headers: { 'if-match': etag },
      body: { firstName: 'Ada' },
    })
    expect(same.status).toBe(412)
    expect((await t.request('GET', userUrl, auth)).body.result.firstName).toBe('Ada')

    // The membership moved on after this ETag was read: accepting with it is refused, and it stays invited.
    const membershipUrl = `/v1/tenants/${tenant.id}/users/${user.id}`
    const before = await t.request('GET', membershipUrl, { token: admin })
    const moved = await t.request('PUT', membershipUrl, { token: admin, body: { workStationId: 'desk 7' } })
    expect(moved.status).toBe(200)
    const accept = await t.request('PUT', membershipUrl, {
      ...auth,
      headers: { 'if-match': String(before.headers.etag) },
      body: { status: 'accepted' },
    })
    expect(accept.status).toBe(412)
    expect(accept.body.error.reason).toBe('precondition_failed')
    expect((await t.request('GET', membershipUrl, { token: admin })).body.result.status).toBe('invited')
  })
})
