import { describe, expect, it } from 'vitest'
import type { OutboxRow } from '../../src/db/schema.js'
import { claimDueRows, markRetry } from '../../src/outbox/outbox.repository.js'
import { SEND_NOW_LEASE_MS, sendNow } from '../../src/outbox/send-now.js'
import { useTestApp } from '../helpers/test-app.js'

/**
 * A message its caller sends now, itself (outbox/send-now.ts; a webhook's test event): written leased to
 * the caller, so no worker takes it meanwhile, marked sent when the caller delivered it, and taken over by
 * a worker only when the caller died mid-send and its lease ran out. The test event over HTTP:
 * test/modules/webhooks/operations.test.ts.
 */
const t = useTestApp()

function message() {
  return {
    id: crypto.randomUUID(),
    tenantId: null,
    kind: 'send_now_test',
    payload: { n: 1 },
    now: t.clock.now(),
  }
}

async function stored(id: string) {
  return t.ctx.db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
}

/** What a worker's claim would take now, of `id`. */
async function claimable(id: string, at: Date) {
  const claimed = await claimDueRows(t.ctx.db, at, new Date(at.getTime() + 60_000), 100)
  return claimed.filter((row) => row.id === id)
}

describe('sendNow', () => {
  it('hands the caller its row leased to it, its first attempt counted, and marks it sent once delivered', async () => {
    const sent = message()
    let handed: OutboxRow | undefined
    const outcome = await sendNow(t.ctx, sent, async (row) => {
      handed = row
      // While the caller sends, no worker's claim takes the row.
      expect(await claimable(row.id, t.clock.now())).toEqual([])
      return { sent: true, attempt: 'answered as is' }
    })
    expect(outcome).toEqual({ sent: true, attempt: 'answered as is' })
    const lease = sent.now.getTime() + SEND_NOW_LEASE_MS
    expect(handed).toMatchObject({ id: sent.id, status: 'queued', attempts: 1, payload: { n: 1 } })
    expect(handed?.locked_until?.getTime()).toBe(lease)
    expect(handed?.next_attempt_at.getTime()).toBe(lease)
    const after = await stored(sent.id)
    expect(after).toMatchObject({ status: 'sent', locked_until: null, attempts: 1 })
    expect(after.sent_at?.getTime()).toBe(t.clock.now().getTime())
  })

  it('leaves a row the caller did not deliver as the caller left it', async () => {
    const failed = message()
    const retryAt = new Date(t.clock.now().getTime() + 5_000)
    const outcome = await sendNow(t.ctx, failed, async (row) => {
      await markRetry(t.ctx.db, row.id, 'receiver down', retryAt)
      return { sent: false }
    })
    expect(outcome).toEqual({ sent: false })
    const after = await stored(failed.id)
    expect(after).toMatchObject({ status: 'queued', locked_until: null, last_error: 'receiver down' })
    expect(after.next_attempt_at.getTime()).toBe(retryAt.getTime())
  })

  it('lets a worker take the row over once the lease of a caller that died mid-send runs out', async () => {
    const lost = message()
    await expect(
      sendNow(t.ctx, lost, async () => {
        throw new Error('the process died')
      }),
    ).rejects.toThrow('the process died')
    expect(await stored(lost.id)).toMatchObject({ status: 'queued', attempts: 1 })
    const lease = lost.now.getTime() + SEND_NOW_LEASE_MS
    expect(await claimable(lost.id, new Date(lease - 1_000))).toEqual([])
    const [taken] = await claimable(lost.id, new Date(lease))
    expect(taken).toMatchObject({ id: lost.id, status: 'queued', attempts: 2 })
  })
})
