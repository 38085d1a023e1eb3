import { type PostgresCursor, type PostgresPool, type PostgresPoolClient, sql } from 'kysely'
import type pg from 'pg'
import { statementTexts } from './statement-texts.js'

/**
 * A `pg` pool whose statements are sent as named prepared statements. PostgreSQL parses and plans an
 * unnamed statement every time it is sent, and for the short statements of a request that is most of
 * the database's work (docs/performance.md, "Figures behind the code"). Named, a statement is parsed once per connection and its plan is cached by the server.
 *
 * Kysely renders the same SQL text for the same query shape, so the set of texts is small. What keeps it
 * bounded: statements with many parameters (multi-row inserts, whose text varies with the row count) stay
 * unnamed — unless the text is a reused shape's (statement-texts.ts), whose number its shapes bound, such
 * as several invitations in one statement — and past MAX_NAMED distinct texts new ones stay unnamed too —
 * each connection holds every statement it has prepared until it closes.
 *
 * Behind a connection pooler in transaction mode (PgBouncer before 1.21) named statements cannot work;
 * `prepare: false` turns this off.
 */
export const MAX_NAMED = 500
/**
 * Marks a statement that must be planned each time it runs, so stays unnamed: one whose best plan depends
 * on how big a table is now, on a table that starts empty and grows fast (the outbox). A named statement
 * keeps the plan PostgreSQL chose after its first runs until the table's statistics change — never, while
 * autovacuum is off or behind — so a read by primary key planned on an empty outbox went on scanning the
 * whole table at every batch (docs/performance.md, "Writes written together"). Planning such a
 * statement costs a fraction of a millisecond, once per batch of rows.
 */
const PLANNED_EACH_RUN_MARK = '/* planned each run */'
export const PLANNED_EACH_RUN = sql.raw(PLANNED_EACH_RUN_MARK)
export const MAX_NAMED_PARAMETERS = 64
const MAX_NAMED_LENGTH = 16_384

export class StatementNames {
  readonly #names = new Map<string, string>()

  /** The name of this text's prepared statement, or undefined when it is sent unnamed. */
  nameFor(text: string, parameterCount: number): string | undefined {
    const known = this.#names.get(text)
    if (known !== undefined) return known
    if (text.includes(PLANNED_EACH_RUN_MARK)) return undefined
    const bounded = statementTexts.holds(text)
    if (!bounded && (parameterCount > MAX_NAMED_PARAMETERS || text.length > MAX_NAMED_LENGTH))
      return undefined
    if (this.#names.size >= MAX_NAMED || !isPlannable(text)) return undefined
    const name = `tenantry_${this.#names.size + 1}`
    this.#names.set(text, name)
    return name
  }

  get size(): number {
    return this.#names.size
  }
}

/** Only statements with a plan gain from a name; transaction control and DDL (migrations) would only fill the table. */
function isPlannable(sql: string): boolean {
  return /^\s*(select|insert|update|delete|with)\b/i.test(sql)
}

export interface GuardedPoolOptions {
  /** Send statements as named prepared statements (default true). */
  prepare?: boolean
  names?: StatementNames
  /** Told once per connection that fails, idle or in use (it is discarded; the pool opens another). */
  onError?: (error: Error) => void
}

/**
 * Hands `pg` connections to Kysely. `pg-pool` listens for 'error' on idle connections only; a connection
 * that is checked out has none, and when the server goes away (a restart, a failover, a terminated
 * backend) the client emits 'error', which without a listener kills the process. So every connection the
 * pool opens gets a listener of its own for its whole life, and one that failed goes back to the pool as
 * broken, which discards it; the next checkout opens a new one.
 */
export function guardedPool(pool: pg.Pool, options: GuardedPoolOptions = {}): PostgresPool {
  const names = options.prepare === false ? undefined : (options.names ?? new StatementNames())
  const broken = new WeakMap<pg.PoolClient, Error>()
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      if (broken.has(client)) return
      broken.set(client, error)
      options.onError?.(error)
    })
  })
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect()
      return {
        query: ((sqlOrCursor: string | PostgresCursor<unknown>, parameters?: ReadonlyArray<unknown>) => {
          if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor as never)
          const values = parameters ? [...parameters] : []
          const name = names?.nameFor(sqlOrCursor, values.length)
          return name === undefined
            ? client.query(sqlOrCursor, values)
            : client.query({ name, text: sqlOrCursor, values })
        }) as unknown as PostgresPoolClient['query'],
        release: () => client.release(broken.get(client)),
      }
    },
    end: () => pool.end(),
  }
}
