import type { Logger } from 'pino'
import type { Config } from '../config.js'
import { openDatabase } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'

/** `tenantry migrate`: apply pending migrations and exit; non-zero when one fails. */
export async function runMigrateCommand(config: Config, logger: Logger): Promise<number> {
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  try {
    const { applied } = await migrateToLatest(database.db)
    logger.info(
      { applied },
      applied.length ? `applied ${applied.length} migration(s)` : 'schema is up to date',
    )
    return 0
  } catch (error) {
    logger.error({ err: error }, 'migration failed')
    return 1
  } finally {
    await database.close()
  }
}
