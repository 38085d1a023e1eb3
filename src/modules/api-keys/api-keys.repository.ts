import { type Kysely, sql, type Transaction } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { ApiKeyRow, Database } from '../../db/schema.js'
import { updateTenantOwnedRow } from '../../http/request-context.js'

/** SQL for API keys. Each function takes the executor first, and every key is addressed by its tenant. */

type Executor = Kysely<Database> | Transaction<Database>

export async function insertApiKey(db: Executor, row: ApiKeyRow): Promise<void> {
  await withConstraintErrors(() => db.insertInto('api_keys').values(row).execute())
}

export async function findApiKey(db: Executor, tenantId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function listApiKeys(
  db: Executor,
  tenantId: string,
  page: { afterId?: string | undefined; limit?: number | undefined },
): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).orderBy('id')
  if (page.afterId) query = query.where('id', '>', page.afterId)
  if (page.limit !== undefined) query = query.limit(page.limit + 1)
  return query.execute()
}

/**
 * One statement: the write and, when the request carried If-Match, the check that the row is still the
 * version the caller read (db/row-version.ts). 'stale': nothing written, the If-Match names another version.
 */
export async function updateApiKeyStatus(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Pick<ApiKeyRow, 'status' | 'updated' | 'updated_by'>,
): Promise<ApiKeyRow | 'stale' | undefined> {
  return updateTenantOwnedRow(db, 'api_keys', tenantId, id, changes)
}

/** Enabled, unexpired SCIM keys of a tenant, counted under a lock on the tenant's row. */
export async function countLiveScimKeys(
  db: Transaction<Database>,
  tenantId: string,
  now: Date,
): Promise<number> {
  await sql`select 1 from tenants where id = ${tenantId} for update`.execute(db)
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('scope', '=', 'scim')
    .where('status', '=', 'enabled')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
