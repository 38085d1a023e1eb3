import { afterAll, beforeAll, beforeEach, expect } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { OutboxWorker } from '../../src/outbox/outbox-worker.js'
import { createTenantAsAdmin, uniqueEmail, uniqueName } from './fixtures.js'
import { invitationLinkIn, startSmtpServer, type TestSmtpServer } from './smtp.js'
import { useTestApp } from './test-app.js'
import { TEST_ADMIN } from './test-env.js'

/**
 * What the invitation tests share (invitations.test.ts, invitations-pages.test.ts): the app with its mail
 * going through a worker to a real SMTP server, a tenant whose name needs escaping, a fresh administrator
 * token per test (tests move the clock), and the two steps most tests start with.
 */
export function useInvitationFixture() {
  const sent = () => {
    if (!smtp) throw new Error('the SMTP server is not started yet')
    return smtp
  }
  const state = { token: '', tenant: { id: '', name: '' } }
  let smtp: TestSmtpServer | undefined
  const t = useTestApp(async () => {
    smtp = await startSmtpServer()
    return { env: { TENANTRY_SMTP_URL: smtp.url } }
  })
  let worker: OutboxWorker | undefined

  beforeAll(async () => {
    worker = new OutboxWorker(t.ctx)
    worker.start()
    state.token = await t.adminToken()
    state.tenant = await createTenantAsAdmin(t, { name: uniqueName('Acme <b>&</b> "Co"') })
  })
  afterAll(async () => {
    await worker?.stop()
    await smtp?.close()
  })
  beforeEach(async () => {
    t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime())))
    // Tests move the clock by a day; a fresh administrator token keeps up with it.
    state.token = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
  })

  /** A platform user without a password (as the users API or a bulk load creates them). */
  async function userWithoutPassword(): Promise<{ id: string; email: string }> {
    const email = uniqueEmail('invitee')
    const response = await t.request('POST', '/v1/users', {
      token: state.token,
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
    const before = sent().messages.filter((m) => m.envelopeTo.includes(user.email)).length
    const response = resend
      ? await t.request('PUT', `/v1/tenants/${state.tenant.id}/users/${user.id}`, {
          token: state.token,
          body: { status: 'invited' },
        })
      : await t.request('POST', `/v1/tenants/${state.tenant.id}/users`, {
          token: state.token,
          body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited', ...body },
        })
    expect(response.status).toBeLessThan(300)
    const mails = await sent().waitForMailTo(user.email, before + 1)
    return invitationLinkIn(mails[mails.length - 1]!).token
  }

  return {
    t,
    userWithoutPassword,
    inviteAndReadToken,
    /** A new administrator token, after a test moved the clock past the last one's life. */
    async refreshToken() {
      state.token = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
    },
    get token() {
      return state.token
    },
    get tenant() {
      return state.tenant
    },
    get smtp() {
      return sent()
    },
  }
}
