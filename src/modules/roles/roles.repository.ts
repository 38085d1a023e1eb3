import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database, RoleRow } from '../../db/schema.js'

/** SQL for roles. Each function takes the executor (db or transaction) first. */

type Executor = Kysely<Database> | Transaction<Database>

/** Roles owned by no tenant: the platform roles and the built-in tenant roles. */
export async function listGlobalRoles(db: Executor): Promise<RoleRow[]> {
  return db.selectFrom('roles').selectAll().where('tenant_id', 'is', null).orderBy('id').execute()
}

export async function findRole(db: Executor, id: string): Promise<RoleRow | undefined> {
  return db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst()
}

export interface RoleListFilter {
  scope: 'platform' | 'tenant'
  /** For tenant roles: the built-in ones and those owned by these tenants (a tenant and its ancestors). */
  ownerTenantIds?: string[] | undefined
  afterId?: string | undefined
  limit?: number | undefined
}

export async function listRoles(db: Executor, filter: RoleListFilter): Promise<RoleRow[]> {
  let query = db.selectFrom('roles').selectAll().where('scope', '=', filter.scope).orderBy('id')
  const owners = filter.ownerTenantIds ?? []
  query = query.where((eb) =>
    owners.length === 0
      ? eb('tenant_id', 'is', null)
      : eb.or([eb('tenant_id', 'is', null), sql<boolean>`tenant_id = any(${sql.val(owners)}::uuid[])`]),
  )
  if (filter.afterId) query = query.where('id', '>', filter.afterId)
  if (filter.limit !== undefined) query = query.limit(filter.limit + 1)
  return query.execute()
}
