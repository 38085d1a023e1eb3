import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { OutboxWorker, type OutboxWorkerOptions } from '../../../src/outbox/outbox-worker.js'
import { createTenantAsAdmin, insertUser, REGION_ID } from '../../helpers/fixtures.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * Webhooks (docs/webhooks.md): deliveries checked by a receiver with the `standardwebhooks` verifier, through a
 * receiver that answers 500 and then is down for a while — every event arrives, in order, with the same
 * webhook-id on retries —; an endpoint failing for 24 h is disabled (an event too); invitation.expired
 * is written once whatever the number of workers.
 */
const t = useTestApp({
  clock: new FollowingClock(),
  env: {
    TENANTRY_OUTBOUND_ALLOW_HTTP: 'true',
    TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true',
    TENANTRY_INVITATION_TTL: '60',
  },
})
let admin: string
const workers: OutboxWorker[] = []

beforeAll(async () => {
  admin = await t.adminToken()
})
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()))
})

const FAST: OutboxWorkerOptions = {
  pollIntervalMs: 30,
  webhookBaseBackoffMs: 40,
  webhookMaxBackoffMs: 150,
  sweepIntervalMs: 60_000,
}

function startWorker(options: OutboxWorkerOptions = {}) {
  const worker = new OutboxWorker({ ...t.ctx, config: t.config }, { ...FAST, ...options })
  workers.push(worker)
  worker.start()
  return worker
}

interface Received {
  id: string
  type: string
  data: any
}

/** A loopback receiver that verifies every request with the standardwebhooks package. */
class Receiver {
  server!: Server
  port = 0
  mode: 'ok' | 'error' = 'ok'
  secret = ''
  /** Every request that verified, in arrival order, with the status answered. */
  seen: { id: string; status: number }[] = []
  delivered: Received[] = []
  bad = 0

  async start(port = 0) {
    this.server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk) => {
        body += chunk
      })
      request.on('end', () => {
        try {
          const payload = new Webhook(this.secret).verify(body, headersOf(request.headers)) as any
          const id = String(request.headers['webhook-id'])
          const status = this.mode === 'ok' ? 204 : 500
          this.seen.push({ id, status })
          if (status === 204) this.delivered.push({ id, type: payload.type, data: payload.data })
          response.statusCode = status
        } catch {
          this.bad += 1
          response.statusCode = 400
        }
        response.end()
      })
    })
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
  }
  async stop() {
    this.server.closeAllConnections?.()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
  get url() {
    return `http://127.0.0.1:${this.port}/hooks`
  }
}

function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
  )
}

async function until(check: () => boolean | Promise<boolean>, ms = 15_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 25))
  }
}

async function createHook(tenantId: string, receiver: Receiver, body: Record<string, unknown> = {}) {
  const response = await t.request('POST', `/v1/tenants/${tenantId}/webhooks`, {
    token: admin,
    body: { url: receiver.url, events: ['tenant.*'], ...body },
  })
  expect(response.status).toBe(201)
  expect(response.body.result.secret).toMatch(/^whsec_/)
  receiver.secret = response.body.result.secret
  return response.body.result
}

describe('webhook endpoints', () => {
  it('validates, shows the secret once, stores it encrypted, and audits the change', async () => {
    const tenant = await createTenantAsAdmin(t)
    const bad = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks`, {
      token: admin,
      body: { url: 'ftp://hooks.example.com/x', events: ['tenant.*'] },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('url')
    const pattern = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks`, {
      token: admin,
      body: { url: 'https://hooks.example.com/x', events: ['membership.**'] },
    })
    expect(pattern.status).toBe(400)
    const receiver = new Receiver()
    await receiver.start()
    try {
      const hook = await createHook(tenant.id, receiver)
      const read = await t.request('GET', `/v1/tenants/${tenant.id}/webhooks/${hook.id}`, { token: admin })
      expect(read.status).toBe(200)
      expect(read.body.result).not.toHaveProperty('secret')
      const stored = await t.ctx.db
        .selectFrom('webhooks')
        .select('secret')
        .where('id', '=', hook.id)
        .executeTakeFirstOrThrow()
      expect(JSON.stringify(stored.secret)).not.toContain(receiver.secret.slice(6))
      const list = await t.request('GET', `/v1/tenants/${tenant.id}/webhooks`, { token: admin })
      expect(list.body.result.map((w: any) => w.id)).toEqual([hook.id])
      const events = await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?action=webhook.created`, {
        token: admin,
      })
      expect(events.body.result[0].changes.secret).toEqual([null, '********'])
      // an agent may not manage webhooks
      const agent = await insertUser(t.ctx.db)
      await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
        token: admin,
        body: { email: agent.email, roleId: ROLE_IDS.agent, status: 'accepted' },
      })
      const agentToken = await t.tokenFor(agent.email, agent.password)
      expect(
        (await t.request('GET', `/v1/tenants/${tenant.id}/webhooks`, { token: agentToken })).status,
      ).toBe(403)
    } finally {
      await receiver.stop()
    }
  })
})

describe('invitation.expired', () => {
  it('is written once when the window passes, whichever worker sweeps', async () => {
    const tenant = await createTenantAsAdmin(t)
    const user = await insertUser(t.ctx.db)
    const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin,
      body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(invited.status).toBe(201)
    const one = new OutboxWorker({ ...t.ctx, config: t.config }, FAST)
    const two = new OutboxWorker({ ...t.ctx, config: t.config }, FAST)
    await one.sweep()
    const expired = async () =>
      (
        await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?action=invitation.expired`, {
          token: admin,
        })
      ).body.result
    expect(await expired()).toEqual([])
    t.clock.advance(61_000)
    await Promise.all([one.sweep(), two.sweep(), one.sweep()])
    const events = await expired()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      target: { type: 'membership', id: user.id },
      actor: { type: 'system' },
    })
    await one.stop()
    await two.stop()
  })
})

describe('fan-out', () => {
  it('queues one delivery per matching event of the creates written in one statement, sub-tenants included', async () => {
    const parent = await createTenantAsAdmin(t)
    const receiver = new Receiver()
    await receiver.start()
    const hook = await createHook(parent.id, receiver, {
      includeSubTenants: true,
      events: ['tenant.created', 'membership.*', 'integration.created'],
    })
    const other = await createHook(parent.id, receiver, { events: ['tenant.updated'] })
    // a new child tenant: the event's tenant is the row its own statement inserts
    const child = await createTenantAsAdmin(t, { parentId: parent.id })
    const invitee = await insertUser(t.ctx.db)
    const invite = await t.request('POST', `/v1/tenants/${child.id}/users`, {
      token: admin,
      body: { email: invitee.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(invite.status).toBe(201)
    const integration = await t.request('POST', `/v1/tenants/${parent.id}/integrations`, {
      token: admin,
      body: { type: 'rest', name: 'Fan-out CRM', active: false, properties: {} },
    })
    expect(integration.status).toBe(201)
    // an invitation of nobody writes nothing, so it queues nothing
    const nobody = await t.request('POST', `/v1/tenants/${child.id}/users`, {
      token: admin,
      body: { email: 'nobody-at-all@example.com', roleId: ROLE_IDS.agent },
    })
    expect(nobody.status).toBe(404)

    const queued = async (webhookId: string) =>
      (
        await t.ctx.db
          .selectFrom('outbox')
          .select('payload')
          .where('ordering_key', '=', webhookId)
          .orderBy('seq')
          .execute()
      ).map((r) => (r.payload as { action: string }).action)
    expect(await queued(hook.id)).toEqual(['tenant.created', 'membership.invited', 'integration.created'])
    expect(await queued(other.id)).toEqual([])
    const event = await t.ctx.db
      .selectFrom('audit_events')
      .select(['target_id', 'tenant_id'])
      .where('action', '=', 'membership.invited')
      .where('tenant_id', '=', child.id)
      .executeTakeFirstOrThrow()
    expect(event.target_id).toBe(invitee.id)
    await receiver.stop()
  })
})

describe('deliveries', () => {
  it('every event arrives in order, through a receiver answering 500 and then down, same webhook-id on retries', async () => {
    const parent = await createTenantAsAdmin(t)
    const child = await createTenantAsAdmin(t, { parentId: parent.id })
    const receiver = new Receiver()
    await receiver.start()
    const hook = await createHook(parent.id, receiver, {
      includeSubTenants: true,
      events: ['tenant.updated'],
    })

    receiver.mode = 'error'
    for (const n of [1, 2, 3, 4, 5]) {
      const put = await t.request('PUT', `/v1/tenants/${n % 2 ? child.id : parent.id}`, {
        token: admin,
        body: { description: `step ${n}` },
      })
      expect(put.status).toBe(200)
    }
    // a refused change queues nothing
    const queued = async () =>
      (await t.ctx.db.selectFrom('outbox').select('id').where('ordering_key', '=', hook.id).execute()).length
    expect(await queued()).toBe(5)
    const dup = await t.request('POST', '/v1/tenants', {
      token: admin,
      body: { name: parent.name, regionId: REGION_ID },
    })
    expect(dup.status).toBe(409)
    expect(await queued()).toBe(5)

    startWorker()
    startWorker() // two workers: the outbox keeps one delivery in flight per endpoint
    await until(() => receiver.seen.length >= 3)
    const firstId = receiver.seen[0]?.id
    // down for a while: the port refuses connections
    await receiver.stop()
    await new Promise((r) => setTimeout(r, 400))
    receiver.mode = 'ok'
    await receiver.start(receiver.port)
    await until(() => new Set(receiver.delivered.map((d) => d.id)).size === 5)

    expect(receiver.bad).toBe(0)
    // the retries of the first event carried one webhook-id, the one finally delivered
    expect(receiver.seen.filter((s) => s.status === 500).every((s) => s.id === firstId)).toBe(true)
    expect(receiver.delivered[0]?.id).toBe(firstId)
    const firstDelivery = receiver.delivered.findIndex((d) => d.id === firstId)
    expect(firstDelivery).toBe(0)
    // in order, each at least once
    const order: string[] = []
    for (const d of receiver.delivered)
      if (!order.includes(d.data.changes.description[1])) order.push(d.data.changes.description[1])
    expect(order).toEqual(['step 1', 'step 2', 'step 3', 'step 4', 'step 5'])
    expect(receiver.delivered[0]).toMatchObject({
      type: 'tenant.updated',
      data: { action: 'tenant.updated', tenantId: child.id },
    })

    await until(async () => {
      const rows = await t.ctx.db
        .selectFrom('webhook_deliveries')
        .select('outcome')
        .where('webhook_id', '=', hook.id)
        .execute()
      return rows.filter((r) => r.outcome === 'succeeded').length >= 5
    })
    const deliveries = await t.request(
      'GET',
      `/v1/tenants/${parent.id}/webhooks/${hook.id}/deliveries?limit=100`,
      { token: admin },
    )
    expect(deliveries.status).toBe(200)
    const attempts = deliveries.body.result as any[]
    expect(
      attempts.filter((a) => a.outcome === 'failed' && a.messageId === firstId).length,
    ).toBeGreaterThanOrEqual(3)
    expect(attempts.filter((a) => a.outcome === 'succeeded').length).toBeGreaterThanOrEqual(5)
    expect(t.logs.join('')).toContain('webhook delivered')
    expect(t.logs.join('')).toContain('webhook not delivered; will retry')
    await receiver.stop()
  })

  it('disables an endpoint failing for 24 h, and says so in an event', async () => {
    const tenant = await createTenantAsAdmin(t)
    const receiver = new Receiver()
    await receiver.start()
    receiver.mode = 'error'
    const hook = await createHook(tenant.id, receiver, { events: ['tenant.updated'] })
    await t.request('PUT', `/v1/tenants/${tenant.id}`, { token: admin, body: { description: 'x' } })
    const worker = new OutboxWorker({ ...t.ctx, config: t.config }, FAST)
    await until(async () => {
      await worker.runOnce()
      return receiver.seen.length >= 1
    })
    t.clock.advance(25 * 3_600_000)
    await until(async () => {
      await worker.runOnce()
      const row = await t.ctx.db
        .selectFrom('webhooks')
        .select('active')
        .where('id', '=', hook.id)
        .executeTakeFirstOrThrow()
      return !row.active
    })
    admin = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password) // the clock moved past the old token
    const read = await t.request('GET', `/v1/tenants/${tenant.id}/webhooks/${hook.id}`, { token: admin })
    expect(read.body.result).toMatchObject({
      active: false,
      disabledReason: expect.stringContaining('failed'),
    })
    const events = await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?action=webhook.disabled`, {
      token: admin,
    })
    expect(events.body.result[0]).toMatchObject({
      actor: { type: 'system', id: null },
      target: { id: hook.id },
    })
    const left = await t.ctx.db
      .selectFrom('outbox')
      .select('status')
      .where('ordering_key', '=', hook.id)
      .execute()
    expect(left.every((r) => r.status === 'failed')).toBe(true)
    // re-enabled by hand
    const again = await t.request('PUT', `/v1/tenants/${tenant.id}/webhooks/${hook.id}`, {
      token: admin,
      body: { active: true },
    })
    expect(again.body.result).toMatchObject({ active: true, disabledReason: null, failingSince: null })
    await worker.stop()
    await receiver.stop()
  })
})
