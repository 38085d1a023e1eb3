import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import type { Database } from '../../src/db/schema.js'
import { INVITATION_EMAIL, type LeasedRow, leasedRowsQuery } from '../../src/outbox/outbox.repository.js'
import { OutboxWorker } from '../../src/outbox/outbox-worker.js'
import { insertUser, REGION_ID, uniqueName } from '../helpers/fixtures.js'
import { freePort } from '../helpers/free-port.js'
import { useOutboxFixture } from '../helpers/outbox-fixture.js'
import { onServerDatabase } from '../helpers/test-database.js'

/**
 * The outbox worker's claim (docs/api.md#the-invitation-e-mail): rows a process leased to itself are sent without a claim, due
 * rows are claimed FOR UPDATE SKIP LOCKED, and many workers send each mail once. The mail itself and
 * delivery failures: outbox.test.ts.
 */

const f = useOutboxFixture()
const { t, smtpServer, startWorker, stopWorker, invite, outboxRowsFor, emailStatus } = f

/**
 * A stand-in for this process's worker that takes the rows handed to it (leased for 2 minutes, as a
 * worker leases them) and sends nothing — as a process that dies after the commit.
 */
function takeHandOvers(): { taken: LeasedRow[]; detach: () => void } {
  const taken: LeasedRow[] = []
  const detach = t.ctx.outboxSignal.attach({
    lease: (now) => new Date(now.getTime() + 120_000),
    take: (rows) => taken.push(...rows),
  })
  return { taken, detach }
}

describe('claiming', () => {
  it('sends the mail its own process wrote leased to it without claiming it, and leaves other due rows in turn', async () => {
    const smtp = await smtpServer()
    // Every statement the worker runs, by kind; its due scans come only once a minute.
    const statements: string[] = []
    const db = t.ctx.db.withPlugin({
      transformQuery: ({ node }) => {
        statements.push(node.kind)
        return node
      },
      transformResult: async ({ result }) => result,
    })
    const worker = startWorker(smtp.url, { pollIntervalMs: 60_000 }, db)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    // A due row this process did not write (another process's, say): only a scan of the due rows finds it.
    const stray = crypto.randomUUID()
    const past = new Date(t.clock.now().getTime() - 1_000)
    await t.database.handle.db
      .insertInto('outbox')
      .values({
        id: stray,
        tenant_id: f.tenant.id,
        kind: INVITATION_EMAIL,
        payload: JSON.stringify({ to: 'stray@example.test' }),
        next_attempt_at: past,
        created: past,
      })
      .execute()
    try {
      statements.length = 0
      const user = await insertUser(t.database.handle.db)
      expect((await invite(user.email)).status).toBe(201)
      // Written claimed: its first attempt counted, leased to this process's worker.
      const [written] = await outboxRowsFor(user.id)
      expect(written!.attempts).toBe(1)
      const [mail] = await smtp.waitFor(1)
      expect(mail!.envelopeTo).toEqual([user.email])
      await expect.poll(() => emailStatus(user.id)).toBe('sent')
      // One read by primary key and one mark: no claim statement (a claim would be a second UPDATE).
      expect(statements).toEqual(['SelectQueryNode', 'UpdateQueryNode'])
      const row = await t.database.handle.db
        .selectFrom('outbox')
        .select(['status', 'attempts', 'locked_until'])
        .where('id', '=', stray)
        .executeTakeFirstOrThrow()
      expect(row).toEqual({ status: 'queued', attempts: 0, locked_until: null })
      expect(smtp.messages).toHaveLength(1)
    } finally {
      await stopWorker(worker)
      await t.database.handle.db.deleteFrom('outbox').where('id', '=', stray).execute()
    }
  })

  it('reads its handed-over rows by primary key alone, never walking the due index', async () => {
    // The usual state of a busy outbox: most rows sent (their due-index entries stay until a vacuum),
    // some queued, statistics up to date. Asked for `status = 'queued'`, the planner ANDs the primary key
    // with the due index and reads every entry of it for a batch of a few rows.
    const db = t.database.handle.db
    const marker = `plan-${crypto.randomUUID()}`
    await sql`
      insert into outbox (id, tenant_id, kind, payload, status, next_attempt_at, created)
      select gen_random_uuid(), ${f.tenant.id}::uuid, ${INVITATION_EMAIL},
             jsonb_build_object('to', ${marker}::text), case when g % 40 = 0 then 'queued' else 'sent' end,
             now() + interval '1 hour', now()
      from generate_series(1, 4000) g`.execute(db)
    try {
      await sql`analyze outbox`.execute(db)
      const { rows } = await sql<{ id: string }>`
        select id from outbox where payload->>'to' = ${marker} and status = 'queued' limit 18`.execute(db)
      expect(rows).toHaveLength(18)
      const plan = await leasedRowsQuery(
        db,
        rows.map((row) => row.id),
      ).explain()
      const text = plan.map((line) => Object.values(line).join(' ')).join('\n')
      expect(text).toContain('outbox_pkey')
      expect(text).not.toContain('outbox_due_idx')
    } finally {
      await sql`delete from outbox where payload->>'to' = ${marker}`.execute(db)
    }
  })

  it('leaves a row leased to a process that died before sending it to the others until its lease runs out', async () => {
    const smtp = await smtpServer()
    // This process's worker as it was when the process died: it took the row and sent nothing.
    const { taken, detach } = takeHandOvers()
    // Another process's worker: no signal, so it finds rows only by scanning the due ones.
    const other = new OutboxWorker({
      ...t.ctx,
      outboxSignal: undefined,
      config: { ...t.config, smtpUrl: smtp.url },
    })
    try {
      const user = await insertUser(t.database.handle.db)
      expect((await invite(user.email)).status).toBe(201)
      const [row] = await outboxRowsFor(user.id)
      expect(taken).toEqual([{ id: row!.id, lease: row!.locked_until }])
      expect(await other.runOnce()).toBe(0)
      t.clock.advance(119_000)
      expect(await other.runOnce()).toBe(0)
      t.clock.advance(1_001)
      expect(await other.runOnce()).toBe(1)
      await smtp.waitForMailTo(user.email, 1)
      const [sent] = await outboxRowsFor(user.id)
      expect(sent).toMatchObject({ status: 'sent', attempts: 2 })
    } finally {
      detach()
      await other.stop()
    }
  })

  it('leaves a handed-over row whose lease is half gone to run out, then claims it afresh', async () => {
    const smtp = await smtpServer()
    // The row as a write leases and hands it over (captured here, so that it can be handed over late).
    const { taken, detach } = takeHandOvers()
    const user = await insertUser(t.database.handle.db)
    try {
      expect((await invite(user.email)).status).toBe(201)
    } finally {
      detach()
    }
    const worker = startWorker(smtp.url, { pollIntervalMs: 60_000 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Handed over when 61 of its 120 s are gone (a long backlog): too late to start a send within it.
    t.clock.advance(61_000)
    const [late] = taken
    t.ctx.outboxSignal.handOver([
      {
        id: late!.id,
        tenantId: f.tenant.id,
        kind: INVITATION_EMAIL,
        payload: {},
        now: t.clock.now(),
        lease: late!.lease,
      },
    ])
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(smtp.messages.filter((m) => m.envelopeTo.includes(user.email))).toHaveLength(0)
    expect((await outboxRowsFor(user.id))[0]).toMatchObject({ status: 'queued', attempts: 1 })
    // Once the lease has run out, the due scan claims it: a second attempt, sent once.
    t.clock.advance(60_000)
    expect(await worker.runOnce()).toBe(1)
    await smtp.waitForMailTo(user.email, 1)
    expect((await outboxRowsFor(user.id))[0]).toMatchObject({ status: 'sent', attempts: 2 })
    await stopWorker(worker)
  })

  it('gives back the leases of rows it was handed and did not send when it stops', async () => {
    const smtp = await smtpServer({ delayMs: 400 })
    const worker = startWorker(smtp.url, { batchSize: 1 })
    const first = await insertUser(t.database.handle.db)
    const second = await insertUser(t.database.handle.db)
    expect((await invite(first.email)).status).toBe(201)
    // The first mail is in hand (its SMTP answer takes 400 ms) when the second is handed over.
    await expect.poll(() => smtp.dataReceived, { interval: 10 }).toBe(1)
    expect((await invite(second.email)).status).toBe(201)
    await stopWorker(worker)
    expect((await outboxRowsFor(first.id))[0]).toMatchObject({ status: 'sent' })
    // Due for any worker at once, its unused attempt given back.
    expect((await outboxRowsFor(second.id))[0]).toMatchObject({
      status: 'queued',
      attempts: 0,
      locked_until: null,
    })
    const other = startWorker(smtp.url)
    await smtp.waitForMailTo(second.email, 1)
    await stopWorker(other)
  })

  it('waits for its next poll after a failed read, however many handed-over rows are waiting', async () => {
    // A database nobody listens on: every statement fails at once with a refused connection.
    const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/none` })
    pool.on('error', () => {})
    let attempts = 0
    const connect = pool.connect.bind(pool)
    pool.connect = (() => {
      attempts += 1
      return connect()
    }) as typeof pool.connect
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    const worker = startWorker(undefined, { pollIntervalMs: 60_000 }, db)
    try {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const before = attempts
      // 200 rows: two reads' worth. One read fails, then the worker waits (1 s while unreachable).
      const now = t.clock.now()
      const lease = t.ctx.outboxSignal.lease(now)
      expect(lease).toBeDefined()
      t.ctx.outboxSignal.handOver(
        Array.from({ length: 200 }, () => ({
          id: crypto.randomUUID(),
          tenantId: null,
          kind: INVITATION_EMAIL,
          payload: {},
          now,
          lease,
        })),
      )
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(attempts - before).toBe(1)
    } finally {
      await stopWorker(worker)
      await db.destroy()
    }
  })
})

describe('many workers', () => {
  it.skipIf(!onServerDatabase)(
    'two workers on one PostgreSQL database deliver 100 queued invitations with no duplicate and no loss',
    async () => {
      // (createTenantAsAdmin's cached token has expired: earlier tests moved the clock by a day.)
      const created = await t.request('POST', '/v1/tenants', {
        token: f.token,
        body: { name: uniqueName(), regionId: REGION_ID },
      })
      const own = created.body.result as { id: string }
      const db = t.database.handle.db
      const now = new Date()
      const users = Array.from({ length: 100 }, (_, i) => ({
        id: crypto.randomUUID(),
        email: `bulk.${i}.${Date.now()}@example.test`,
        role_id: ROLE_IDS.platformUser,
        status: 'enabled' as const,
        created: now,
        updated: now,
      }))
      await db.insertInto('users').values(users).execute()
      for (const user of users) {
        const response = await t.request('POST', `/v1/tenants/${own.id}/users`, {
          token: f.token,
          body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
        })
        expect(response.status).toBe(201)
      }

      const smtp = await smtpServer({ delayMs: 20 })
      const again = await t.database.connectAgain()
      const first = startWorker(smtp.url, { batchSize: 10 })
      const second = startWorker(smtp.url, { batchSize: 10 }, again.db)
      await smtp.waitFor(100, 60_000)
      await expect
        .poll(async () => {
          const rows = await db
            .selectFrom('outbox')
            .select('status')
            .where('tenant_id', '=', own.id)
            .execute()
          return rows.filter((r) => r.status === 'sent').length
        })
        .toBe(100)
      t.clock.advance(3_600_000)
      expect((await first.runOnce()) + (await second.runOnce())).toBe(0)
      await stopWorker(first)
      await stopWorker(second)

      const recipients = smtp.messages.map((m) => m.envelopeTo[0])
      expect(recipients).toHaveLength(100)
      expect(new Set(recipients)).toEqual(new Set(users.map((u) => u.email)))
      expect(first.stats.sent + second.stats.sent).toBe(100)
      // Both took part: the claims interleaved instead of one worker waiting on the other's locks.
      expect(first.stats.sent).toBeGreaterThan(0)
      expect(second.stats.sent).toBeGreaterThan(0)
    },
    90_000,
  )
})
