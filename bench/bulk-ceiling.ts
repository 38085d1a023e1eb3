import { sql } from 'kysely'
import { uuidv7 } from 'uuidv7'
import { ROLE_IDS } from '../src/access/permissions.js'
import { bootstrap } from '../src/bootstrap.js'
import { systemClock } from '../src/clock.js'
import { openDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'

/**
 * The raw ceiling of a bulk load: the same rows as the import, inserted straight into a fresh users
 * table (the same schema: migrated like the server's) with one INSERT … SELECT FROM unnest(…) per
 * 100,000 rows, no HTTP, no validation, no answers. Through the same driver the server uses: `pg` for a
 * server database, PGlite (in this process) for the embedded one.
 */
export const CEILING_STATEMENT_ROWS = 100_000

/** The fields of generated user `i` of a run: the import sends the same values. */
export function generatedUser(run: string, i: number) {
  return {
    email: `bulk-${run}-${i}@bench.test`,
    roleId: ROLE_IDS.platformUser,
    firstName: `First${i}`,
    lastName: 'Benchmark',
    externalId: `ext-${i}`,
    personalTelephone: `+1415${String(i % 10_000_000).padStart(7, '0')}`,
  }
}

export async function measureCeiling(
  target: { url: string } | { dataDir: string },
  run: string,
  rows: number,
): Promise<{ rowsPerSecond: number; seconds: number }> {
  const handle = await openDatabase(
    'url' in target ? { url: target.url, dataDir: '' } : { url: undefined, dataDir: target.dataDir },
  )
  try {
    await migrateToLatest(handle.db)
    await bootstrap(handle.db, systemClock, { email: 'ceiling@bench.test', password: 'ceiling-password' })
    let seconds = 0
    for (let from = 0; from < rows; from += CEILING_STATEMENT_ROWS) {
      const count = Math.min(CEILING_STATEMENT_ROWS, rows - from)
      const now = new Date()
      const columns = {
        id: [] as string[],
        email: [] as string[],
        first: [] as string[],
        last: [] as string[],
        external: [] as string[],
        phone: [] as string[],
      }
      for (let i = from; i < from + count; i++) {
        const user = generatedUser(run, i)
        columns.id.push(uuidv7())
        columns.email.push(user.email)
        columns.first.push(user.firstName)
        columns.last.push(user.lastName)
        columns.external.push(user.externalId)
        columns.phone.push(user.personalTelephone)
      }
      const started = performance.now()
      await sql`
        insert into users (id, email, role_id, first_name, last_name, external_id, personal_telephone, status,
          created, updated)
        select id, email, ${ROLE_IDS.platformUser}::uuid, first_name, last_name, external_id, phone, 'enabled',
          ${now}::timestamptz, ${now}::timestamptz
        from unnest(${columns.id}::uuid[], ${columns.email}::text[], ${columns.first}::text[],
          ${columns.last}::text[], ${columns.external}::text[], ${columns.phone}::text[])
          as incoming(id, email, first_name, last_name, external_id, phone)
      `.execute(handle.db)
      seconds += (performance.now() - started) / 1000
    }
    return { rowsPerSecond: rows / seconds, seconds }
  } finally {
    await handle.close()
  }
}

/**
 * CPU seconds used so far by the PostgreSQL backends serving `url`'s database (a server on this machine
 * only; undefined otherwise): the database's share of the work, which the server's own CPU time leaves out.
 */
export async function databaseCpuSeconds(url: string | undefined): Promise<number | undefined> {
  if (!url || !/@(127\.0\.0\.1|localhost)[:/]/.test(url)) return undefined
  const { default: pg } = await import('pg')
  const { readFileSync } = await import('node:fs')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    )
    let ticks = 0
    for (const { pid } of rows) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        ticks += Number(fields[11]) + Number(fields[12])
      } catch {
        // the backend ended meanwhile
      }
    }
    return ticks / 100
  } catch {
    return undefined
  } finally {
    await client.end()
  }
}
