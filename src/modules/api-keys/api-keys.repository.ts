import { type Kysely, sql, type Transaction } from 'kysely'
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
