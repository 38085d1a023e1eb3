import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Rate-limit and lock-out counters shared by every process on one server database (docs/operations.md#rate-limit-counters-across-processes): one
 * fixed window per key (a hash of the limit's name and what it counts), bumped by an atomic upsert.
 * Unlogged: a counter lost in a server crash only gives back a minute's budget, and skipping the WAL
 * keeps a failed login cheap. Expired rows are swept hourly.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create unlogged table rate_limit_counters (
      key text primary key,
      count integer not null,
      reset_at timestamptz not null
    );
    create index rate_limit_counters_reset_idx on rate_limit_counters (reset_at);
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(db, 'drop table rate_limit_counters')
}
