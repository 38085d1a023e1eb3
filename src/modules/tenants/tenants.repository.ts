import { type Kysely, sql } from 'kysely'
import type { Database, NewTenantRow, TenantRow, TenantUpdate } from '../../db/schema.js'

/** SQL for tenants. Each function takes the executor (db or transaction) first. */

export interface TenantRecordRow extends TenantRow {
  parent_name: string | null
  child_ids: string[]
}

function selectTenants(db: Kysely<Database>) {
  return db
    .selectFrom('tenants as t')
    .leftJoin('tenants as p', 'p.id', 't.parent_id')
    .selectAll('t')
    .select('p.name as parent_name')
    .select(
      // Derived, never stored: childIds is always exactly the tenants whose parent is this one.
      sql<
        string[]
      >`coalesce((select array_agg(c.id order by c.created, c.id) from tenants c where c.parent_id = t.id), '{}')`.as(
        'child_ids',
      ),
    )
}

export async function insertTenant(db: Kysely<Database>, row: NewTenantRow): Promise<void> {
  await db.insertInto('tenants').values(row).execute()
}

export async function findTenant(db: Kysely<Database>, id: string): Promise<TenantRecordRow | undefined> {
  return selectTenants(db).where('t.id', '=', id).executeTakeFirst()
}

export interface TenantListFilter {
  regionId?: string | undefined
  /** Only these tenants and their descendants; undefined means every tenant. */
  subtreesOf?: string[] | undefined
  afterId?: string | undefined
  limit?: number | undefined
}

export async function listTenants(
  db: Kysely<Database>,
  filter: TenantListFilter,
): Promise<TenantRecordRow[]> {
  let query = selectTenants(db).orderBy('t.id')
  if (filter.regionId) query = query.where('t.region_id', '=', filter.regionId)
  if (filter.subtreesOf) {
    const roots = filter.subtreesOf
    if (roots.length === 0) return []
    query = query.where((eb) =>
      eb.or([eb('t.id', 'in', roots), sql<boolean>`t.parent_ids && ${sql.val(roots)}::uuid[]`]),
    )
  }
  if (filter.afterId) query = query.where('t.id', '>', filter.afterId)
  if (filter.limit !== undefined) query = query.limit(filter.limit + 1)
  return query.execute()
}

export async function updateTenant(
  db: Kysely<Database>,
  id: string,
  changes: TenantUpdate,
): Promise<boolean> {
  const result = await db.updateTable('tenants').set(changes).where('id', '=', id).executeTakeFirst()
  return result.numUpdatedRows > 0n
}
