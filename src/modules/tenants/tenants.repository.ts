import { type Kysely, sql } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import { keysetPage } from '../../db/keyset.js'
import { nextUpdated } from '../../db/row-version.js'
import type { Database, NewTenantRow, TenantRow, TenantUpdate } from '../../db/schema.js'
import { statementTexts } from '../../db/statement-texts.js'
import { ifMatchUpdated } from '../../http/request-context.js'
import type { AuditEvent } from '../../outbox/audit-event.js'
import { recordInsert, type UnitInsert } from '../../outbox/write-unit.js'

/** SQL for tenants. Each function takes the executor (db or transaction) first. */

export interface TenantRecordRow extends TenantRow {
  parent_name: string | null
  child_ids: string[]
}

/**
 * Tenants with their parent's name and their child ids, in one statement. Both are scalar subqueries, not
 * a join: PostgreSQL plans every statement it is sent, and with the join planning cost as much as the
 * rest of the query (docs/performance.md). childIds reads the (parent_id, created, id) index in order.
 * `childrenOf` names the parent by value when one tenant is read, so that the planner estimates that
 * tenant's own number of children rather than the table's average — with one parent holding most
 * tenants, the average made it scan the whole table on every read.
 */
function selectTenants(db: Kysely<Database>, childrenOf?: string) {
  const parent = childrenOf === undefined ? sql.ref('t.id') : sql`${childrenOf}::uuid`
  return db
    .selectFrom('tenants as t')
    .selectAll('t')
    .select([
      sql<string | null>`(select p.name from tenants p where p.id = t.parent_id)`.as('parent_name'),
      // Derived, never stored: childIds is always exactly the tenants whose parent is this one.
      sql<
        string[]
      >`array(select c.id from tenants c where c.parent_id = ${parent} order by c.created, c.id)`.as(
        'child_ids',
      ),
    ])
}

/**
 * A new tenant and its `tenant.created` event, written by the write unit (outbox/write-unit.ts). A taken
 * name is tenant_name_taken; an unknown region or administrator a validation_failed naming it.
 */
export function tenantInsert(row: NewTenantRow, event: AuditEvent): UnitInsert<{ id: string }> {
  return recordInsert('tenants', row, {
    event,
    returning: 'id',
    // The event's tenant is the new one, which the statement's own snapshot cannot see: its ancestors
    // come from the row.
    ancestorIds: row.parent_ids ?? [],
    uniqueKey: row.name_key,
    constraints: { name: row.name },
  })
}

/**
 * One tenant by id. Its text is built and compiled once (db/statement-texts.ts): only the id changes from
 * read to read, and building and compiling the query each time cost a tenth of the server's CPU per GET
 * (docs/performance.md). Both of its parameters are the tenant id.
 */
export async function findTenant(db: Kysely<Database>, id: string): Promise<TenantRecordRow | undefined> {
  const query = statementTexts.compile<TenantRecordRow>('find tenant', [id, id], () =>
    selectTenants(db, id).where('t.id', '=', id).compile(),
  )
  const { rows } = await db.executeQuery(query)
  return rows[0]
}

export interface TenantListFilter {
  regionId?: string | undefined
  /** Only the direct children of this tenant (the platform id: the root tenants). */
  parentId?: string | undefined
  /** Only these tenants and their descendants; undefined means every tenant. */
  subtreesOf?: string[] | undefined
  afterId?: string | undefined
  limit?: number | undefined
}

export async function listTenants(
  db: Kysely<Database>,
  filter: TenantListFilter,
): Promise<TenantRecordRow[]> {
  let query = selectTenants(db)
  if (filter.regionId) query = query.where('t.region_id', '=', filter.regionId)
  if (filter.parentId) query = query.where('t.parent_id', '=', filter.parentId)
  if (filter.subtreesOf) {
    const roots = filter.subtreesOf
    if (roots.length === 0) return []
    query = query.where((eb) =>
      eb.or([eb('t.id', 'in', roots), sql<boolean>`t.parent_ids && ${sql.val(roots)}::uuid[]`]),
    )
  }
  return keysetPage(query, 't.id', filter).execute()
}

/**
 * One statement: the write, and — when the request carried If-Match — the check that the row is still
 * the version the caller read (docs/api.md#safe-retries). `updated` moves forward by at least 1 ms on every write, so it
 * names a version even when two writes share a clock reading. 'stale': the row is there but changed.
 */
export async function updateTenant(
  db: Kysely<Database>,
  id: string,
  changes: TenantUpdate,
): Promise<'updated' | 'missing' | 'stale'> {
  const expected = ifMatchUpdated('tenants')
  let query = db
    .updateTable('tenants')
    .set({ ...changes, updated: nextUpdated((changes.updated as Date | undefined) ?? new Date()) })
    .where('id', '=', id)
  if (expected) query = query.where('updated', '=', expected)
  const result = await withConstraintErrors(() => query.executeTakeFirst(), {
    name: changes.name as string | undefined,
  })
  if (result.numUpdatedRows > 0n) return 'updated'
  if (!expected) return 'missing'
  const exists = await db.selectFrom('tenants').select('id').where('id', '=', id).executeTakeFirst()
  return exists ? 'stale' : 'missing'
}

/** Whether `id` names an active identity provider of the tenant (a default identity provider must). */
export async function isActiveProviderOf(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('identity_providers')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('active', '=', true)
    .executeTakeFirst()
  return row !== undefined
}
