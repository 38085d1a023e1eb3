import { randomUUID } from 'node:crypto'
import { CompiledQuery, type Kysely, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { newId } from '../../src/crypto/uuid7.js'
import { openDatabase } from '../../src/db/database.js'
import type { Database } from '../../src/db/schema.js'
import {
  claimDueRows,
  claimDueRowsQuery,
  INVITATION_EMAIL,
  insertOutboxRows,
  leasedRowsQuery,
  markSent,
} from '../../src/outbox/outbox.repository.js'
import { createTestDatabase, onServerDatabase } from '../helpers/test-database.js'

/**
 * The outbox starts empty and grows by a row an invitation. The worker's statements must keep finding
 * rows through the indexes as it grows, also while its statistics lag (autovacuum off, as on the CI
 * machine, or behind): a plan PostgreSQL chose on the empty table and kept for a named statement scanned
 * the whole outbox at every batch (docs/performance.md, "Invitations written together").
 */
describe.skipIf(!onServerDatabase)('the outbox worker’s statements as the outbox grows', () => {
  it('read, mark and claim through the indexes after the outbox grew from a few pages, without new statistics', async () => {
    const database = await createTestDatabase()
    // One connection: the statements' plans, kept or not, are that connection's.
    const handle = await openDatabase({ url: database.url, dataDir: '', poolSize: 1 })
    const db = handle.db
    try {
      const now = new Date()
      const lease = new Date(now.getTime() + 60_000)
      // A young outbox, measured once (as autovacuum does, or the bench after seeding): a few pages. Each
      // statement runs more than the five times after which PostgreSQL keeps one generic plan for a named
      // statement — on two pages, a sequential scan.
      await sentRows(db, 100)
      await sql`analyze outbox`.execute(db)
      for (let i = 0; i < 8; i++) {
        await leasedRowsQuery(db, [randomUUID()]).execute()
        await markSent(db, [randomUUID()], now)
        await claimDueRows(db, now, lease, 10)
      }
      await sentRows(db, 20_000)
      const { rows } = await sql<{ id: string }>`select id from outbox limit 5`.execute(db)
      const ids = rows.map((row) => row.id)

      const before = await outboxSequentialScans(db)
      expect(await leasedRowsQuery(db, ids).execute()).toHaveLength(5)
      await markSent(db, ids, now)
      expect(await claimDueRows(db, now, lease, 10)).toEqual([])
      expect(await outboxSequentialScans(db)).toBe(before)
    } finally {
      await handle.close()
      await database.drop()
    }
  })
})

describe('the claim beside mail handed over to its worker', () => {
  it('walks only the due rows, not the rows written leased to this process and not sent yet', async () => {
    const database = await createTestDatabase()
    const db = database.handle.db
    try {
      const now = new Date()
      const lease = new Date(now.getTime() + 60_000)
      const mail = (leased: boolean) => ({
        id: newId(),
        tenantId: null,
        kind: INVITATION_EMAIL,
        payload: { to: 'someone@example.test' },
        now,
        ...(leased ? { lease } : {}),
      })
      // Under load most queued mail is handed over: 500 such rows, and 3 that are due.
      await insertOutboxRows(
        db,
        Array.from({ length: 500 }, () => mail(true)),
      )
      await insertOutboxRows(db, [mail(false), mail(false), mail(false)])
      const query = claimDueRowsQuery(db, now, lease, 100).compile()
      const { rows } = await db.executeQuery<{ 'QUERY PLAN': unknown }>(
        CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, [...query.parameters]),
      )
      const plan = JSON.stringify(rows[0]?.['QUERY PLAN'])
      // The claim took the 3 due rows, and read no leased one to leave it: a leased row is due only when
      // its lease runs out.
      const scans = [...plan.matchAll(/"Index Name":"outbox_due_idx"[^}]*?"Actual Rows":(\d+)/g)]
      expect(scans.length).toBeGreaterThan(0)
      for (const [, actualRows] of scans) expect(Number(actualRows)).toBeLessThanOrEqual(3)
      expect(plan).not.toMatch(/"Rows Removed by Filter":[1-9]/)
      // When the leases run out, the claim takes every row (the 3 it leased until then among them).
      expect(await claimDueRows(db, lease, new Date(lease.getTime() + 60_000), 1000)).toHaveLength(503)
    } finally {
      await database.drop()
    }
  })
})

async function sentRows(db: Kysely<Database>, count: number): Promise<void> {
  await sql`
    insert into outbox (id, kind, payload, status, next_attempt_at, created)
    select gen_random_uuid(), 'invitation_email', '{"to": "someone@example.test"}'::jsonb, 'sent', now(), now()
    from generate_series(1, ${count}::int)`.execute(db)
}

/** Sequential scans of the outbox so far, this connection's included (its pending counts flushed). */
async function outboxSequentialScans(db: Kysely<Database>): Promise<number> {
  await sql`select pg_stat_force_next_flush()`.execute(db)
  const { rows } = await sql<{ scans: string }>`
    select seq_scan::text as scans from pg_stat_user_tables where relname = 'outbox'`.execute(db)
  return Number(rows[0]?.scans)
}
