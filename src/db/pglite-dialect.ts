import type { PGlite } from '@electric-sql/pglite'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'

/**
 * A Kysely dialect over one embedded PGlite session.
 *
 * PGlite is a single PostgreSQL backend: interleaving two callers' statements would mix their
 * transactions (a rollback of one would undo the other's writes). So the one connection is handed out
 * behind a promise mutex, taken in acquireConnection and released in releaseConnection — the community
 * dialect we measured does not do this (see docs/architecture.md#library-pitfalls).
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}
  createAdapter() {
    return new PostgresAdapter()
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite)
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler()
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db)
  }
}

class Mutex {
  #tail: Promise<void> = Promise.resolve()
  lock(): Promise<() => void> {
    let release!: () => void
    const next = new Promise<void>((resolve) => {
      release = resolve
    })
    const acquired = this.#tail.then(() => release)
    this.#tail = this.#tail.then(() => next)
    return acquired
  }
}

class PGliteDriver implements Driver {
  readonly #mutex = new Mutex()
  readonly #connection: PGliteConnection
  #release: (() => void) | undefined

  constructor(private readonly pglite: PGlite) {
    this.#connection = new PGliteConnection(pglite)
  }
  async init() {}
  async acquireConnection(): Promise<DatabaseConnection> {
    this.#release = await this.#mutex.lock()
    return this.#connection
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    // One backend serialises everything anyway; isolation levels add nothing here.
    void settings
    await connection.executeQuery(CompiledQuery.raw('begin'))
  }
  async commitTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }
  async rollbackTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }
  async releaseConnection() {
    const release = this.#release
    this.#release = undefined
    release?.()
  }
  async destroy() {
    if (!this.pglite.closed) await this.pglite.close()
  }
}

const TEXT_OID = 25

/**
 * PGlite sends every parameter as text, made by the serializer of its type, and measures each text's
 * UTF-8 length a character at a time in JavaScript: for the hundreds of kilobytes of a bulk load's batch,
 * a twentieth of the load's time (docs/performance.md, "Bulk load"). A text parameter given as bytes (a
 * Uint8Array that is not a Buffer) is sent as it is instead, in binary format — which for text is exactly
 * its UTF-8 bytes. Any other value is made text as PGlite's own serializer makes it.
 */
const QUERY_OPTIONS = {
  serializers: {
    [TEXT_OID]: ((value: unknown) =>
      value instanceof Uint8Array && !Buffer.isBuffer(value)
        ? value
        : value instanceof Date
          ? value.toISOString()
          : String(value)) as (value: unknown) => string,
  },
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGlite) {}
  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pglite.query<R>(compiled.sql, [...compiled.parameters], QUERY_OPTIONS)
    const affected = result.affectedRows
    return {
      rows: result.rows,
      ...(affected !== undefined && isWrite(compiled.sql) ? { numAffectedRows: BigInt(affected) } : {}),
    }
  }
  // biome-ignore lint/correctness/useYield: streaming is not supported by PGlite; callers batch instead
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streamQuery is not supported on the embedded database')
  }
}

function isWrite(sql: string): boolean {
  return /^\s*(with\b[\s\S]*?\b)?(insert|update|delete|merge)\b/i.test(sql)
}
