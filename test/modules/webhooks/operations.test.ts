import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { sweepExpired } from '../../../src/background.js'
import { OutboxWorker } from '../../../src/outbox/outbox-worker.js'
import { freshTenant, memberWithToken } from '../../helpers/fixtures.js'
import { createTestApp, FollowingClock, type TestApp } from '../../helpers/test-app.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

/**
 * The console's webhook operations as API routes (docs/webhooks.md#operations-test-redeliver-rotate-the-secret): a test event sent now, a redelivery under
 * the same webhook-id, and a secret rotation during which a receiver holding either secret verifies every
 * delivery with the `standardwebhooks` package — until the old secret's 24 h are over on the service's
 * clock. Each route refuses another tenant's endpoint with 404 and a caller without MANAGE_WEBHOOKS.
 */
let t: TestApp
const receivers: WebhookReceiver[] = []

beforeAll(async () => {
  t = await createTestApp({
    clock: new FollowingClock(),
    env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
  })
})
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()))
  await t.close()
})

async function receiver(): Promise<WebhookReceiver> {
  const r = await new WebhookReceiver(() => t.clock.now()).start()
  receivers.push(r)
  return r
}

async function endpoint(events = ['tenant.updated']) {
  const { tenant, admin } = await freshTenant(t)
  const r = await receiver()
  const created = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks`, {
    token: admin.token,
    body: { url: r.url, events },
  })
  expect(created.status).toBe(201)
  r.secrets.set('first', created.body.result.secret)
  return { tenant, admin, receiver: r, hook: created.body.result }
}

/** One delivery of every queued message of the endpoint, as the worker makes it. */
async function runWorker() {
  const worker = new OutboxWorker({ ...t.ctx, config: t.config }, { sweepIntervalMs: 3_600_000 })
  await worker.runOnce()
  await worker.stop()
}

async function outboxStatus(messageId: string) {
  const row = await t.ctx.db
    .selectFrom('outbox')
    .select(['status'])
    .where('id', '=', messageId)
    .executeTakeFirstOrThrow()
  return row.status
}

describe('POST …/webhooks/{id}/test', () => {
  it('sends a signed webhook.test now and answers the attempt, which the delivery log holds', async () => {
    const { tenant, admin, receiver: r, hook } = await endpoint()
    const sent = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/test`, {
      token: admin.token,
    })
    expect(sent.status).toBe(200)
    expect(sent.body.result).toMatchObject({
      webhookId: hook.id,
      action: 'webhook.test',
      outcome: 'succeeded',
      responseStatus: 204,
      error: null,
      attempt: 1,
      eventId: null,
    })
    expect(r.received).toHaveLength(1)
    expect(r.received[0]).toMatchObject({ id: sent.body.result.messageId, verifiedWith: ['first'] })
    expect(r.received[0]?.body).toMatchObject({
      type: 'webhook.test',
      data: { webhookId: hook.id, tenantId: tenant.id, requestedBy: { type: 'user', id: admin.id } },
    })
    const log = await t.request('GET', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/deliveries`, {
      token: admin.token,
    })
    expect(log.body.result).toEqual([sent.body.result])
    expect(await outboxStatus(sent.body.result.messageId)).toBe('sent')
  })

  it('reports a failing receiver in the answer, once: no retry, and the endpoint is not marked failing', async () => {
    const { tenant, admin, receiver: r, hook } = await endpoint()
    r.answer = 500
    const sent = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/test`, {
      token: admin.token,
    })
    expect(sent.status).toBe(200)
    expect(sent.body.result).toMatchObject({
      outcome: 'failed',
      responseStatus: 500,
      error: 'answered HTTP 500',
    })
    expect(await outboxStatus(sent.body.result.messageId)).toBe('failed')
    await runWorker()
    expect(r.received).toHaveLength(1)
    const read = await t.request('GET', `/v1/tenants/${tenant.id}/webhooks/${hook.id}`, {
      token: admin.token,
    })
    expect(read.body.result.failingSince).toBeNull()
  })

  it('reaches a disabled endpoint too (to check a repaired receiver before re-enabling it)', async () => {
    const { tenant, admin, receiver: r, hook } = await endpoint()
    await t.request('PUT', `/v1/tenants/${tenant.id}/webhooks/${hook.id}`, {
      token: admin.token,
      body: { active: false },
    })
    const sent = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/test`, {
      token: admin.token,
    })
    expect(sent.body.result.outcome).toBe('succeeded')
    expect(r.received).toHaveLength(1)
  })
})

describe('POST …/webhooks/{id}/deliveries/{d}/retry', () => {
  it('redelivers a failed event now under the same webhook-id, as its next attempt, and it is not sent again', async () => {
    const { tenant, admin, receiver: r, hook } = await endpoint()
    r.answer = 503
    expect(
      (
        await t.request('PUT', `/v1/tenants/${tenant.id}`, {
          token: admin.token,
          body: { description: 'one' },
        })
      ).status,
    ).toBe(200)
    await runWorker()
    expect(r.received).toHaveLength(1)
    const failed = (
      await t.request('GET', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/deliveries`, {
        token: admin.token,
      })
    ).body.result[0]
    expect(failed).toMatchObject({ outcome: 'failed', attempt: 1, action: 'tenant.updated' })
    expect(await outboxStatus(failed.messageId)).toBe('queued') // waiting for its retry

    r.answer = 204
    const again = await t.request(
      'POST',
      `/v1/tenants/${tenant.id}/webhooks/${hook.id}/deliveries/${failed.id}/retry`,
      { token: admin.token },
    )
    expect(again.status).toBe(200)
    expect(again.body.result).toMatchObject({
      messageId: failed.messageId,
      eventId: failed.eventId,
      outcome: 'succeeded',
      attempt: 2,
    })
    expect(again.body.result.id).not.toBe(failed.id)
    expect(r.received.map((m) => m.id)).toEqual([failed.messageId, failed.messageId])
    expect(r.received[1]?.verifiedWith).toEqual(['first'])
    expect(r.received[1]?.body).toMatchObject({ type: 'tenant.updated', data: { id: failed.eventId } })
    // The queued retry is done with: the worker does not send it a third time.
    expect(await outboxStatus(failed.messageId)).toBe('sent')
    t.clock.advance(3_600_000)
    await runWorker()
    expect(r.received).toHaveLength(2)

    // A delivered message can be sent once more too, still under its webhook-id.
    const third = await t.request(
      'POST',
      `/v1/tenants/${tenant.id}/webhooks/${hook.id}/deliveries/${again.body.result.id}/retry`,
      { token: (await memberWithToken(t, tenant.id)).token },
    )
    expect(third.body.result).toMatchObject({ messageId: failed.messageId, attempt: 3, outcome: 'succeeded' })
  })

  it('refuses an attempt of another endpoint (404) and a disabled endpoint (409)', async () => {
    const one = await endpoint()
    const two = await endpoint()
    const sent = await t.request('POST', `/v1/tenants/${two.tenant.id}/webhooks/${two.hook.id}/test`, {
      token: two.admin.token,
    })
    // two's attempt asked for under one's endpoint (one's own tenant and credentials)
    const crossed = await t.request(
      'POST',
      `/v1/tenants/${one.tenant.id}/webhooks/${one.hook.id}/deliveries/${sent.body.result.id}/retry`,
      { token: one.admin.token },
    )
    expect(crossed.status).toBe(404)
    expect(crossed.body.error.reason).toBe('webhook_delivery_not_found')
    expect(two.receiver.received).toHaveLength(1)

    await t.request('PUT', `/v1/tenants/${two.tenant.id}/webhooks/${two.hook.id}`, {
      token: two.admin.token,
      body: { active: false },
    })
    const disabled = await t.request(
      'POST',
      `/v1/tenants/${two.tenant.id}/webhooks/${two.hook.id}/deliveries/${sent.body.result.id}/retry`,
      { token: two.admin.token },
    )
    expect(disabled.status).toBe(409)
    expect(two.receiver.received).toHaveLength(1)
  })
})

describe('POST …/webhooks/{id}/rotate-secret', () => {
  it('stores the secrets encrypted, and a second rotation keeps only the secret it replaced verifying', async () => {
    const { tenant, admin, receiver: r, hook } = await endpoint()
    const rotate = async () =>
      (
        await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/rotate-secret`, {
          token: admin.token,
        })
      ).body.result.secret as string
    const second = await rotate()
    const third = await rotate()
    const stored = await t.ctx.db
      .selectFrom('webhooks')
      .select(['secret', 'previous_secret'])
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow()
    for (const secret of [r.secrets.get('first') ?? '', second, third])
      expect(JSON.stringify(stored)).not.toContain(secret.slice(6))
    r.secrets.set('second', second)
    r.secrets.set('third', third)
    await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/test`, { token: admin.token })
    expect(r.received.at(-1)?.verifiedWith).toEqual(['second', 'third'])
  })
})

describe('every operation, on another tenant’s endpoint or without MANAGE_WEBHOOKS', () => {
  it('answers 404 for another tenant’s webhook and 403 for an agent; nothing is sent or rotated', async () => {
    const mine = await endpoint()
    const theirs = await endpoint()
    const before = await t.ctx.db
      .selectFrom('webhooks')
      .select(['secret', 'previous_secret'])
      .where('id', '=', theirs.hook.id)
      .executeTakeFirstOrThrow()
    const sent = await t.request('POST', `/v1/tenants/${theirs.tenant.id}/webhooks/${theirs.hook.id}/test`, {
      token: theirs.admin.token,
    })
    const paths = [
      `webhooks/${theirs.hook.id}/rotate-secret`,
      `webhooks/${theirs.hook.id}/test`,
      `webhooks/${theirs.hook.id}/deliveries/${sent.body.result.id}/retry`,
    ]
    for (const path of paths) {
      // their endpoint under my tenant, with my administrator's credentials
      const underMine = await t.request('POST', `/v1/tenants/${mine.tenant.id}/${path}`, {
        token: mine.admin.token,
      })
      expect(underMine.status, path).toBe(404)
      expect(underMine.body.error.reason, path).toBe('webhook_not_found')
      // their tenant's path, with my credentials
      const underTheirs = await t.request('POST', `/v1/tenants/${theirs.tenant.id}/${path}`, {
        token: mine.admin.token,
      })
      expect(underTheirs.status, path).toBe(404)
    }
    const agent = await memberWithToken(t, theirs.tenant.id, ROLE_IDS.agent)
    for (const path of paths) {
      const refused = await t.request('POST', `/v1/tenants/${theirs.tenant.id}/${path}`, {
        token: agent.token,
      })
      expect(refused.status, path).toBe(403)
    }
    const after = await t.ctx.db
      .selectFrom('webhooks')
      .select(['secret', 'previous_secret'])
      .where('id', '=', theirs.hook.id)
      .executeTakeFirstOrThrow()
    expect(after).toEqual(before)
    expect(theirs.receiver.received).toHaveLength(1)
  })
})

describe('the rotation’s 24 hours (last: it moves the service’s clock a day on)', () => {
  it('shows a new secret once; for 24 h both signatures are sent and either secret verifies, then only the new one', async () => {
    const { tenant, admin, receiver: r, hook } = await endpoint()
    const rotated = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/rotate-secret`, {
      token: admin.token,
    })
    expect(rotated.status).toBe(200)
    expect(rotated.headers['cache-control']).toBe('no-store')
    const secret = rotated.body.result.secret as string
    expect(secret).toMatch(/^whsec_/)
    expect(secret).not.toBe(r.secrets.get('first'))
    const expires = new Date(rotated.body.result.previousSecretExpires).getTime()
    expect(expires - t.clock.now().getTime()).toBeGreaterThan(24 * 3_600_000 - 60_000)
    r.secrets.set('second', secret)
    const read = await t.request('GET', `/v1/tenants/${tenant.id}/webhooks/${hook.id}`, {
      token: admin.token,
    })
    expect(read.body.result).not.toHaveProperty('secret')
    expect(JSON.stringify(read.body)).not.toContain(secret.slice(6))

    // Within the 24 h: an event and a test event, each verified by both secrets.
    await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: admin.token,
      body: { description: 'rotated' },
    })
    await runWorker()
    await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/test`, { token: admin.token })
    expect(r.received).toHaveLength(2)
    for (const message of r.received) {
      expect(message.signature.split(' ')).toHaveLength(2)
      expect(message.verifiedWith).toEqual(['first', 'second'])
    }

    // A day later (the service's clock): only the new secret signs.
    t.clock.advance(24 * 3_600_000 + 1_000)
    const token = await t.tokenFor(admin.email, admin.password)
    const late = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hook.id}/test`, { token })
    expect(late.body.result.outcome).toBe('succeeded')
    const last = r.received.at(-1)
    expect(last?.signature.split(' ')).toHaveLength(1)
    expect(last?.verifiedWith).toEqual(['second'])

    // Audited, with the secret masked.
    const events = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/audit-events?action=webhook.secret_rotated`,
      { token },
    )
    expect(events.body.result).toHaveLength(1)
    expect(events.body.result[0]).toMatchObject({
      actor: { type: 'user', id: admin.id },
      target: { type: 'webhook', id: hook.id },
      changes: { secret: ['********', '********'] },
    })
    expect(JSON.stringify(events.body)).not.toContain(secret.slice(6))

    // The hourly sweep destroys the replaced secret once its 24 h are over.
    await sweepExpired(t.ctx)
    const stored = await t.ctx.db
      .selectFrom('webhooks')
      .select(['previous_secret', 'previous_secret_expires'])
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow()
    expect(stored).toEqual({ previous_secret: null, previous_secret_expires: null })
  })
})
