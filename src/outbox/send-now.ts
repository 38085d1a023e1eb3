import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { Database, OutboxRow } from '../db/schema.js'
import { insertLeasedToCaller, markSent, type NewOutboxRow } from './outbox.repository.js'

/** A send started by a request ends well within this; past it, a worker may take the row over. */
export const SEND_NOW_LEASE_MS = 120_000

/** What `send` answers: whether the message went out (the row is then marked sent), and anything else. */
export interface SendOutcome {
  sent: boolean
}

/**
 * A message its caller sends now, itself, instead of queueing it for the worker (a webhook's test event):
 * its outbox row is written already leased to the caller (SEND_NOW_LEASE_MS) — so it jumps no queue and
 * waits behind none, and no worker touches it meanwhile —, handed to `send`, and marked sent when `send`
 * delivered it; otherwise the row stays as `send` left it (marked for a retry, or failed). Should the
 * caller die mid-send, the lease runs out and a worker takes the row over as any due row. Answers what
 * `send` answered.
 */
export async function sendNow<Outcome extends SendOutcome>(
  ctx: { db: Kysely<Database>; clock: Clock },
  message: Omit<NewOutboxRow, 'lease'>,
  send: (row: OutboxRow) => Promise<Outcome>,
): Promise<Outcome> {
  const row = await insertLeasedToCaller(ctx.db, message, SEND_NOW_LEASE_MS)
  const outcome = await send(row)
  if (outcome.sent) await markSent(ctx.db, [row.id], ctx.clock.now())
  return outcome
}
