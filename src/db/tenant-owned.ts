import type { Kysely, Selectable } from 'kysely'
import { keysetPage, type PageWindow } from './keyset.js'
import type { Database } from './schema.js'

/** The versioned tables whose rows a tenant owns, each row keyed by (tenant_id, id). */
export type TenantOwnedTable = 'api_keys' | 'integrations' | 'identity_providers' | 'webhooks'

/**
 * The database seen through the columns every TenantOwnedTable has, as table `row`: Kysely cannot resolve
 * the columns of a generic table, so a statement over any of them is written against this.
 */
export function tenantOwned(db: Kysely<Database>) {
  return db as unknown as Kysely<{ row: { tenant_id: string; id: string; updated: Date } }>
}

/**
 * One page (keyset.ts) of the rows a tenant owns in `table`, in id order: the lists of a tenant's API
 * keys, integrations and webhooks.
 */
export async function listTenantOwnedRows<T extends TenantOwnedTable>(
  db: Kysely<Database>,
  table: T,
  tenantId: string,
  page: PageWindow,
): Promise<Selectable<Database[T]>[]> {
  const query = tenantOwned(db)
    .selectFrom(table as unknown as 'row')
    .selectAll()
    .where('tenant_id', '=', tenantId)
  return (await keysetPage(query, 'id', page).execute()) as Selectable<Database[T]>[]
}
