import type { Kysely } from 'kysely'
import type { Database } from '../../db/schema.js'
import type { Region } from './regions.schemas.js'

/** SQL for regions: reference data, read only. */

export async function listRegions(db: Kysely<Database>): Promise<Region[]> {
  return db.selectFrom('regions').select(['id', 'name', 'description']).orderBy('name').execute()
}

export async function findRegion(db: Kysely<Database>, id: string): Promise<Region | undefined> {
  return db
    .selectFrom('regions')
    .select(['id', 'name', 'description'])
    .where('id', '=', id)
    .executeTakeFirst()
}
