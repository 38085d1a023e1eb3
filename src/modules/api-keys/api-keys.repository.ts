import type { Kysely, Transaction } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { ApiKeyRow, Database } from '../../db/schema.js'

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

export async function updateApiKeyStatus(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Pick<ApiKeyRow, 'status' | 'updated' | 'updated_by'>,
): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}
