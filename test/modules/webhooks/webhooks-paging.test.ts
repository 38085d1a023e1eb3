import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshTenant } from '../../helpers/fixtures.js'
import { createTestApp, FollowingClock, type TestApp } from '../../helpers/test-app.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

/**
 * The webhook lists page like every list (docs/api.md): `?limit=N` answers N items and a `nextCursor`
 * while more remain. Endpoints come in creation order; an endpoint's delivery log newest first, its
 * cursor carrying on to older attempts.
 */
let t: TestApp
let receiver: WebhookReceiver

beforeAll(async () => {
  t = await createTestApp({
    clock: new FollowingClock(),
    env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
  })
  receiver = await new WebhookReceiver(() => t.clock.now()).start()
})
afterAll(async () => {
  await receiver.stop()
  await t.close()
})

/** Every page of a list, following nextCursor from `path` with `?limit=2`. */
async function pages(path: string, token: string): Promise<string[][]> {
  const seen: string[][] = []
  let cursor: string | undefined
  do {
    const query = cursor === undefined ? '?limit=2' : `?limit=2&cursor=${cursor}`
    const page = await t.request('GET', `${path}${query}`, { token })
    expect(page.status).toBe(200)
    seen.push(page.body.result.map((item: { id: string }) => item.id))
    cursor = page.body.nextCursor
  } while (cursor !== undefined)
  return seen
}

describe('GET …/webhooks and …/webhooks/{id}/deliveries with ?limit', () => {
  it('pages the endpoints in creation order and the attempts newest first', async () => {
    const { tenant, admin } = await freshTenant(t)
    const hooks: string[] = []
    for (const n of [1, 2, 3]) {
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks`, {
        token: admin.token,
        body: { url: `${receiver.url}/${n}`, events: ['tenant.updated'] },
      })
      expect(created.status).toBe(201)
      receiver.secrets.set(`hook ${n}`, created.body.result.secret)
      hooks.push(created.body.result.id)
    }
    expect(await pages(`/v1/tenants/${tenant.id}/webhooks`, admin.token)).toEqual([
      [hooks[0], hooks[1]],
      [hooks[2]],
    ])

    const attempts: string[] = []
    for (const _ of [1, 2, 3]) {
      const sent = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks/${hooks[0]}/test`, {
        token: admin.token,
      })
      expect(sent.status).toBe(200)
      attempts.push(sent.body.result.id)
    }
    const log = `/v1/tenants/${tenant.id}/webhooks/${hooks[0]}/deliveries`
    expect(await pages(log, admin.token)).toEqual([[attempts[2], attempts[1]], [attempts[0]]])
  })
})
