import pg from 'pg'
import { adminUrl } from './pg-urls.js'
import type { TestApp } from './test-app.js'
import { onServerDatabase } from './test-database.js'

/**
 * Closes a test app whose pool has had many connections open (bulk loads keep two batches in flight).
 * The pool's `end()` resolves once its clients are told to end, not once they have: dropping the
 * database WITH (FORCE) right away can terminate a backend mid-goodbye, and the pool — which has no
 * error listener — then reports an unhandled error. So: close the app and the pool, wait until the
 * server shows no session on the database, then let the harness drop it.
 */
export async function closeAfterBulk(t: TestApp): Promise<void> {
  await t.app.close()
  await t.database.handle.close()
  if (onServerDatabase) await untilNoSessions(new URL(t.database.url).pathname.slice(1))
  await t.close()
}

async function untilNoSessions(database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl(process.env.TEST_DATABASE_URL!) })
  await client.connect()
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      const { rows } = await client.query<{ n: string }>(
        'select count(*) as n from pg_stat_activity where datname = $1',
        [database],
      )
      if (rows[0]?.n === '0') return
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } finally {
    await client.end()
  }
}
