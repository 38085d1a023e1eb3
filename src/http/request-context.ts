import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance } from 'fastify'
import { type Expression, type Kysely, type Selectable, type SqlBool, sql, type Updateable } from 'kysely'
import { nextUpdated, type VersionedTable } from '../db/row-version.js'
import type { Database } from '../db/schema.js'
import { type TenantOwnedTable, tenantOwned } from '../db/tenant-owned.js'

/**
 * Who asked, for the records a request leaves behind (the audit trail's requestId and ip, docs/webhooks.md).
 * Carried by AsyncLocalStorage rather than through every service signature: it is metadata about the
 * request, not an input to any rule, and every write path would otherwise need two more parameters.
 */
export interface RequestContext {
  requestId: string
  ip: string
  /**
   * A PUT's If-Match (etag.ts): the `updated` instant it names, and the table of the resource the route
   * writes (its `ifMatch` route config). That table's repository adds `AND updated = <instant>` to its
   * UPDATE; a write of any other table in the same request is not concerned.
   */
  ifMatch?: { table: VersionedTable; updated: Date }
}

const storage = new AsyncLocalStorage<RequestContext>()

/** The current request's id and address; undefined outside a request (workers, CLI, bootstrap). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore()
}

/**
 * The version a PUT's If-Match names for the row of `table` it writes: the repository adds
 * `AND updated = <this>` to its UPDATE, so the check and the write are one statement. Undefined without
 * If-Match, for `If-Match: *`, outside a request, and for any other table.
 */
export function ifMatchUpdated(table: VersionedTable): Date | undefined {
  const ifMatch = storage.getStore()?.ifMatch
  return ifMatch?.table === table ? ifMatch.updated : undefined
}

/**
 * For a PUT that finds nothing to change and so writes nothing (a write checks its If-Match in the
 * UPDATE): whether the If-Match names another version of the row of `table` than its `updated`.
 */
export function ifMatchIsStale(table: VersionedTable, updated: Date): boolean {
  const expected = ifMatchUpdated(table)
  return expected !== undefined && expected.getTime() !== updated.getTime()
}

/** Runs the rest of every request — hooks, validation, handler — inside its context. */
export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    storage.run({ requestId: request.id, ip: request.ip }, done)
  })
}

/** An UPDATE query of Kysely, of whichever table: what ifMatchChecked needs of it. */
interface Filterable<Q> {
  where(expression: Expression<SqlBool>): Q
}

/**
 * The request's If-Match for the row of `table`, checked in the UPDATE itself: `query` gains
 * `AND updated = <instant>`, and `outcome` reads what the statement returned — no row while an If-Match
 * was checked is 'stale' (the row exists in another version, or not at all: the caller knows which
 * answer it owes for a missing row).
 */
export function ifMatchChecked<Q extends Filterable<Q>>(
  table: VersionedTable,
  query: Q,
): { query: Q; outcome<R>(row: R | undefined): R | 'stale' | undefined } {
  const expected = ifMatchUpdated(table)
  return {
    query: expected ? query.where(sql<SqlBool>`updated = ${expected}`) : query,
    outcome: (row) => row ?? (expected ? 'stale' : undefined),
  }
}

/**
 * The PUT of a row a tenant owns: `changes` written to row (tenantId, id), its version moved on
 * (nextUpdated) and the request's If-Match checked in the same UPDATE (ifMatchChecked). The row as
 * stored; 'stale' when the If-Match names another version; undefined when there is no such row.
 */
export async function updateTenantOwnedRow<T extends TenantOwnedTable>(
  db: Kysely<Database>,
  table: T,
  tenantId: string,
  id: string,
  changes: Updateable<Database[T]> & { updated: Date },
): Promise<Selectable<Database[T]> | 'stale' | undefined> {
  const { query, outcome } = ifMatchChecked(
    table,
    tenantOwned(db)
      .updateTable(table as unknown as 'row')
      .set({ ...changes, updated: nextUpdated(changes.updated) } as never)
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id),
  )
  const row = await query.returningAll().executeTakeFirst()
  return outcome(row) as Selectable<Database[T]> | 'stale' | undefined
}
