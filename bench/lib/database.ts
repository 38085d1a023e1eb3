import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

/** Runs `use` on a connection of its own to `url`, and closes it whatever happens. */
export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/**
 * The throw-away database a run works on: a fresh database on the PostgreSQL server named by
 * BENCH_DATABASE_URL (created here, dropped at the end), or a fresh data folder for the embedded one.
 */
export interface BenchDatabase {
  kind: 'postgres' | 'embedded'
  /** DATABASE_URL for Tenantry; undefined for the embedded database. */
  url: string | undefined
  /** TENANTRY_DATA_DIR for Tenantry (holds the embedded database). */
  dataDir: string
  /** For the ceiling process: the same database (postgres) or a data folder of its own (embedded). */
  ceiling: { url: string } | { dataDir: string }
  /** The database's name on a PostgreSQL server (its backends' CPU is measured by it). */
  serverDatabaseName?: string
  /** Which database, for the report. */
  describe: string
  drop(): Promise<void>
}

export async function createBenchDatabase(serverUrl: string | undefined): Promise<BenchDatabase> {
  const root = mkdtempSync(join(tmpdir(), 'tenantry-bench-'))
  const removeRoot = () => rmSync(root, { recursive: true, force: true })
  if (!serverUrl) {
    return {
      kind: 'embedded',
      url: undefined,
      dataDir: join(root, 'data'),
      ceiling: { dataDir: join(root, 'ceiling') },
      describe: 'PGlite (embedded PostgreSQL, inside the server process)',
      drop: async () => removeRoot(),
    }
  }

  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14)
  const name = `tenantry_bench_${stamp}_${randomBytes(3).toString('hex')}`
  const version = await withClient(serverUrl, async (admin) => {
    await admin.query(`create database ${name}`)
    return (await admin.query<{ server_version: string }>('show server_version')).rows[0]!.server_version
  })
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    kind: 'postgres',
    serverDatabaseName: name,
    url: url.toString(),
    dataDir: join(root, 'data'),
    ceiling: { url: url.toString() },
    describe: `PostgreSQL ${version} (database ${name})`,
    drop: async () => {
      try {
        await withClient(serverUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`))
      } finally {
        removeRoot()
      }
    },
  }
}
