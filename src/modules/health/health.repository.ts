import { type Kysely, sql } from 'kysely'
import type { Database } from '../../db/schema.js'

/** The cheapest statement the database must answer: readiness asks it. */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db)
}
