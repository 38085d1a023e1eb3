import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { resolve } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import lockfile from 'proper-lockfile'
import { PGliteDialect } from './pglite-dialect.js'
import { guardedPool } from './prepared-pool.js'
import type { Database } from './schema.js'

export type DatabaseKind = 'embedded' | 'memory' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  kind: DatabaseKind
  /** The embedded engine, when there is one (tests dump and load it). */
  pglite?: PGlite
  /** The server pool's connections (for /metrics); absent with the embedded database. */
  poolStats?: () => { total: number; idle: number; waiting: number; max: number }
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  /** `undefined` → embedded in dataDir; `memory://` → throw-away embedded; `postgres://…` → server. */
  url: string | undefined
  dataDir: string
  /** Server pool size. On 2 cores a bigger pool does not help (docs/performance.md#figures-behind-the-code). */
  poolSize?: number
  /** What the server's connections are called in pg_stat_activity (which pool of which process). */
  applicationName?: string
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
      application_name: options.applicationName ?? 'tenantry',
      // An unreachable host (no refusal, just silence) fails a checkout after this long instead of
      // holding the request until the operating system gives up on the connect.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    })
    // The pool re-emits an idle connection's failure; without a listener that would crash the process.
    // guardedPool's own listener on every connection is the one that reports it.
    pool.on('error', () => {})
    await checkReachable(pool, url)
    const dialect = new PostgresDialect({
      pool: guardedPool(pool, {
        prepare: options.prepare !== false,
        ...(options.onConnectionError ? { onError: options.onConnectionError } : {}),
      }),
    })
    const db = new Kysely<Database>({ dialect })
    const max = options.poolSize ?? 10
    const poolStats = () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max,
    })
    return { db, kind: 'postgres', poolStats, close: () => db.destroy() }
  }
  const memory = url === 'memory://'
  let unlock = async () => {}
  if (!memory) {
    mkdirSync(options.dataDir, { recursive: true })
    unlock = await lockDataFolder(options.dataDir)
  }
  try {
    // Loaded only here: a process on a server database never holds the embedded one's code (~6 MB).
    const { PGlite } = await import('@electric-sql/pglite')
    const pglite = await PGlite.create({
      ...(memory ? {} : { dataDir: `${options.dataDir}/pgdata` }),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      parsers: { [INT8_OID]: (value: string) => value },
    })
    const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) })
    const close = async () => {
      await db.destroy()
      await unlock()
    }
    return { db, kind: memory ? 'memory' : 'embedded', pglite, close }
  } catch (error) {
    await unlock()
    throw error
  }
}

/**
 * The embedded database is one process's: two processes writing the same PGlite folder each see only
 * their own writes and one loses them at the next start. proper-lockfile makes `<folder>/pgdata.lock` (a
 * directory, created atomically) and refreshes its time every 5 s; a lock not refreshed for 30 s is
 * stale and is taken over. So that a restart after a crash need not wait those 30 s, the owner's pid and
 * host are written beside it (`pgdata.lock.owner`): a lock whose owner on this host is gone is taken over
 * at once. Returns the release.
 */
async function lockDataFolder(dataDir: string): Promise<() => Promise<void>> {
  const folder = resolve(dataDir)
  const lockPath = `${folder}/pgdata.lock`
  const ownerPath = `${lockPath}.owner`
  const take = () =>
    lockfile.lock(folder, { lockfilePath: lockPath, stale: 30_000, update: 5_000, realpath: false })
  let release: () => Promise<void>
  try {
    release = await take()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
    if (!ownerIsGone(ownerPath)) {
      throw new Error(
        `the data folder ${folder} is in use by another Tenantry process${describeOwner(ownerPath)} ` +
          `(lock ${lockPath}). The embedded database serves one process: stop the other one, give this ` +
          'one its own TENANTRY_DATA_DIR, or point every process at a PostgreSQL server with DATABASE_URL.',
        { cause: error },
      )
    }
    rmSync(lockPath, { recursive: true, force: true })
    release = await take()
  }
  writeFileSync(ownerPath, JSON.stringify({ pid: process.pid, host: hostname() }))
  let released = false
  return async () => {
    if (released) return
    released = true
    await release().catch(() => {})
  }
}

function readOwner(ownerPath: string): { pid: number; host: string } | undefined {
  try {
    const owner = JSON.parse(readFileSync(ownerPath, 'utf8'))
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? owner : undefined
  } catch {
    return undefined
  }
}

function describeOwner(ownerPath: string): string {
  const owner = readOwner(ownerPath)
  return owner ? ` (pid ${owner.pid} on ${owner.host})` : ''
}

/** True only when the lock's owner ran on this host and no longer runs (we do not hold the lock yet). */
function ownerIsGone(ownerPath: string): boolean {
  const owner = readOwner(ownerPath)
  if (!owner || owner.host !== hostname()) return false
  if (owner.pid === process.pid) return true
  try {
    process.kill(owner.pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

/** The URL as it may be printed: the password replaced. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@')
  }
}

/** Fails the start with which server could not be reached and why, instead of a failed migration. */
async function checkReachable(pool: pg.Pool, url: string): Promise<void> {
  try {
    const client = await pool.connect()
    // Discarded, not returned: this connection was opened before guardedPool put its error listener on
    // every new connection, and a listener-less connection that the server later terminates while it is
    // checked out crashes the process (issue 18).
    client.release(true)
  } catch (error) {
    await pool.end().catch(() => {})
    const code = (error as { code?: string }).code
    const reason = (error as Error).message || code || String(error)
    throw new Error(
      `cannot reach the database at ${redactDatabaseUrl(url)}: ${reason}${code && !reason.includes(code) ? ` (${code})` : ''}. ` +
        'Check DATABASE_URL, that the server runs and accepts connections from here, and the credentials.',
      { cause: error },
    )
  }
}
