import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Two index entries fewer on the invitation's path (docs/performance.md):
 * - the outbox's ordering index holds only rows that have an ordering key (webhook deliveries): mail has
 *   none, and the claim looks rows up by `earlier.ordering_key = outbox.ordering_key`, which implies a key;
 * - the rate-limit counters lose their index on reset_at: only the hourly sweep reads by it, and the table
 *   holds little more than an hour of keys, so a scan serves it; every counted attempt wrote the entry.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop index outbox_ordering_idx;
    create index outbox_ordering_idx on outbox (ordering_key, seq)
      where status = 'queued' and ordering_key is not null;
    drop index rate_limit_counters_reset_idx;
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop index outbox_ordering_idx;
    create index outbox_ordering_idx on outbox (ordering_key, seq) where status = 'queued';
    create index rate_limit_counters_reset_idx on rate_limit_counters (reset_at);
  `,
  )
}
