import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import type { Config } from '../../src/config.js'
import { OutboxWorker, type OutboxWorkerOptions } from '../../src/outbox/outbox-worker.js'
import { createTenantAsAdmin, uniqueName } from './fixtures.js'
import { startSmtpServer, type TestSmtpServer } from './smtp.js'
import { useTestApp } from './test-app.js'
import { TEST_ADMIN } from './test-env.js'

/**
 * What the outbox tests share (outbox.test.ts, claiming.test.ts): the app, a tenant with a name that needs
 * escaping, a fresh administrator token per test (tests move the clock), SMTP servers and workers that are
 * stopped after each test, and the invitation and its outbox rows to look at.
 */
export function useOutboxFixture() {
  const t = useTestApp({ env: { TENANTRY_MAIL_FROM: 'Tenantry <invitations@tenantry.test>' } })
  const state = { token: '', tenant: { id: '', name: '' } }
  const workers: OutboxWorker[] = []
  const servers: TestSmtpServer[] = []

  beforeAll(async () => {
    state.tenant = await createTenantAsAdmin(t, { name: uniqueName('Café <i>Ops</i>') })
  })
  // A worker a failed test left running would take the next test's mail.
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()))
  })
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()))
  })
  beforeEach(async () => {
    t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime())))
    state.token = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
  })

  async function smtpServer(options: Parameters<typeof startSmtpServer>[0] = {}) {
    const server = await startSmtpServer(options)
    servers.push(server)
    return server
  }

  /** A worker of this app's database (or another connection to it), sending to `smtpUrl`. */
  function startWorker(smtpUrl: string | undefined, options: OutboxWorkerOptions = {}, db = t.ctx.db) {
    const config: Config = { ...t.config, smtpUrl }
    const worker = new OutboxWorker({ ...t.ctx, db, config }, options)
    workers.push(worker)
    worker.start()
    return worker
  }

  async function stopWorker(worker: OutboxWorker) {
    await worker.stop()
    workers.splice(workers.indexOf(worker), 1)
  }

  function invite(email: string, status = 'invited', roleId: string = ROLE_IDS.agent) {
    return t.request('POST', `/v1/tenants/${state.tenant.id}/users`, {
      token: state.token,
      body: { email, roleId, status },
    })
  }

  async function outboxRowsFor(userId: string) {
    const rows = await t.database.handle.db
      .selectFrom('outbox')
      .selectAll()
      .where('tenant_id', '=', state.tenant.id)
      .execute()
    return rows.filter((r) => (r.payload as { userId: string }).userId === userId)
  }

  async function emailStatus(userId: string) {
    const response = await t.request('GET', `/v1/tenants/${state.tenant.id}/users/${userId}`, {
      token: state.token,
    })
    return response.body.result.invitationEmailStatus as string | null
  }

  return {
    t,
    smtpServer,
    startWorker,
    stopWorker,
    invite,
    outboxRowsFor,
    emailStatus,
    get token() {
      return state.token
    },
    get tenant() {
      return state.tenant
    },
  }
}
