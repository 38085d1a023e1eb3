import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { piece, value } from '../db/statement-pieces.js'
import {
  type CounterRow,
  type CounterStatement,
  type CounterStore,
  type CounterWindow,
  counterWindow,
} from './rate-limit.js'

/**
 * Counters in the server database (table rate_limit_counters, migration 0008), shared by every process
 * on it. One statement per hit: the upsert takes the row's lock, so concurrent hits from any number of
 * processes are counted one after the other and none is lost; a window that has ended restarts at 1.
 */
export class DatabaseCounterStore implements CounterStore {
  constructor(private readonly db: Kysely<Database>) {}

  async hit(key: string, windowMs: number, nowMs: number): Promise<CounterWindow> {
    const { rows } = await this.hitStatement(key, windowMs, nowMs).sql().execute(this.db)
    return counterWindow(rows[0] as CounterRow)
  }

  hitStatement(key: string, windowMs: number, nowMs: number): CounterStatement {
    const now = new Date(nowMs)
    const resetAt = new Date(nowMs + windowMs)
    return piece`
      insert into rate_limit_counters as c (key, count, reset_at) values (${value(key)}, 1, ${value(resetAt)})
      on conflict (key) do update set
        count = case when c.reset_at <= ${value(now)} then 1 else c.count + 1 end,
        reset_at = case when c.reset_at <= ${value(now)} then excluded.reset_at else c.reset_at end
      returning count, reset_at`
  }

  async peek(key: string, nowMs: number): Promise<CounterWindow | undefined> {
    const row = await this.db
      .selectFrom('rate_limit_counters')
      .select(['count', 'reset_at'])
      .where('key', '=', key)
      .where('reset_at', '>', new Date(nowMs))
      .executeTakeFirst()
    return row ? { count: row.count, resetAt: row.reset_at.getTime() } : undefined
  }
}

/** Drops windows that ended more than an hour ago (the hourly sweep in background.ts). */
export async function sweepCounters(db: Kysely<Database>, now: Date): Promise<void> {
  await db
    .deleteFrom('rate_limit_counters')
    .where('reset_at', '<', new Date(now.getTime() - 3_600_000))
    .execute()
}
