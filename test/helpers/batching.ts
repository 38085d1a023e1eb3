import { sql } from 'kysely'
import { batchedStatementSize } from '../../src/http/metrics.js'
import type { TestApp } from './test-app.js'

/**
 * Statements of one kind of batched write (db/statement-batcher.ts) run so far in this process, and the
 * writes they held: `writes` above the requests made means a batch failed and its writes ran again alone.
 */
export async function batchFigures(write: string): Promise<{ statements: number; writes: number }> {
  const { values } = await batchedStatementSize.get()
  const value = (suffix: string) =>
    values.find(
      (v) => v.metricName === `tenantry_batched_statement_size_${suffix}` && v.labels.write === write,
    )?.value ?? 0
  return { statements: value('count'), writes: value('sum') }
}

/**
 * Runs `requests` while another transaction holds `lock` (a `select … for update` or a `lock table`), so
 * that their writes wait and arrive together, as under load; then lets them go.
 */
export async function whileLocked<T>(
  t: TestApp,
  lock: ReturnType<typeof sql>,
  requests: () => Promise<T>,
): Promise<T> {
  let running: Promise<T> | undefined
  await t.database.handle.db.transaction().execute(async (tx) => {
    await lock.execute(tx)
    running = requests()
    await new Promise((resolve) => setTimeout(resolve, 500))
  })
  return running as Promise<T>
}

/** Holds inserts into `table` back (a SHARE lock; reads go on). */
export function tableLock(table: 'tenants' | 'users' | 'integrations') {
  return sql`lock table ${sql.table(table)} in share mode`
}

/**
 * Runs `requests` while inserts into `table` are held back (whileLocked, tableLock), and counts the
 * statements of that table's batched creates they took, and the writes those held.
 */
export async function createsInOneBurst<T>(
  t: TestApp,
  table: 'tenants' | 'users' | 'integrations',
  requests: () => Promise<T>,
): Promise<{ responses: T; statements: number; writes: number }> {
  const before = await batchFigures(table)
  const responses = await whileLocked(t, tableLock(table), requests)
  const after = await batchFigures(table)
  return { responses, statements: after.statements - before.statements, writes: after.writes - before.writes }
}
