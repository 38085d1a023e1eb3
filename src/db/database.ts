import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { PGliteDialect } from './pglite-dialect.js'
import { guardedPool } from './prepared-pool.js'
import type { Database } from './schema.js'

export type DatabaseKind = 'embedded' | 'memory' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  kind: DatabaseKind
  /** The embedded engine, when there is one (tests dump and load it). */
  pglite?: PGlite
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  /** `undefined` → embedded in dataDir; `memory://` → throw-away embedded; `postgres://…` → server. */
  url: string | undefined
  dataDir: string
  /** Server pool size. On 2 cores a bigger pool does not help (STACK.md). */
  poolSize?: number
  /** Start the embedded engine from a dumped data folder instead of running initdb (tests). */
  loadDataDir?: Blob
  /** Server statements as named prepared statements (default true; see prepared-pool.ts). */
  prepare?: boolean
  /**
   * Told once per server connection that fails, idle or in use (a restart, a failover, a terminated
   * backend): a statement in flight on it fails, and the pool opens another connection when next asked.
   */
  onConnectionError?: (error: Error) => void
}

const INT8_OID = 20
const CONNECT_TIMEOUT_MS = 5_000

// Identity columns are bigints and the API carries them as strings. `pg` already returns int8 as a
// string; the embedded engine is told to do the same below.

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const { url } = options
  if (url?.startsWith('postgres://') || url?.startsWith('postgresql://')) {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      // An unreachable host (no refusal, just silence) fails a checkout after this long instead of
      // holding the request until the operating system gives up on the connect.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    })
    // The pool re-emits an idle connection's failure; without a listener that would crash the process.
    // guardedPool's own listener on every connection is the one that reports it.
    pool.on('error', () => {})
    const dialect = new PostgresDialect({
      pool: guardedPool(pool, {
        prepare: options.prepare !== false,
        ...(options.onConnectionError ? { onError: options.onConnectionError } : {}),
      }),
    })
    const db = new Kysely<Database>({ dialect })
    return { db, kind: 'postgres', close: () => db.destroy() }
  }
  const memory = url === 'memory://'
  if (!memory) mkdirSync(options.dataDir, { recursive: true })
  const pglite = await PGlite.create({
    ...(memory ? {} : { dataDir: `${options.dataDir}/pgdata` }),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    parsers: { [INT8_OID]: (value: string) => value },
  })
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) })
  return { db, kind: memory ? 'memory' : 'embedded', pglite, close: () => db.destroy() }
}
