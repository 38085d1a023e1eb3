import type { Logger } from 'pino'
import { systemClock } from '../clock.js'
import type { Config } from '../config.js'
import { resolveKeys } from '../crypto/keys.js'
import { openDatabase } from '../db/database.js'
import { OutboxWorker } from '../outbox/outbox-worker.js'

/**
 * `tenantry worker`: the outbox worker alone, beside servers started with TENANTRY_WORKER=off (or as
 * extra capacity: any number of workers share the outbox safely). It needs a PostgreSQL server database,
 * since the embedded one belongs to the single server process that opened it.
 */
export async function runWorkerCommand(
  config: Config,
  logger: Logger,
  untilStopped: () => Promise<void>,
): Promise<number> {
  if (!config.databaseUrl || config.databaseUrl === 'memory://') {
    logger.error(
      'tenantry worker needs a PostgreSQL server database (DATABASE_URL=postgres://…); with the embedded ' +
        'database the server process delivers mail itself',
    )
    return 78 // EX_CONFIG
  }
  const keys = resolveKeys(config, logger)
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 2,
    applicationName: 'tenantry worker',
    prepare: config.preparedStatements,
    onConnectionError: (error) =>
      logger.warn({ err: error }, 'a database connection failed; the pool replaces it'),
  })
  const worker = new OutboxWorker({ db: database.db, keys, logger, clock: systemClock, config })
  worker.start()
  logger.info(
    worker.mailerKind === 'smtp'
      ? 'outbox worker running: invitation e-mail goes out over SMTP'
      : 'outbox worker running: TENANTRY_SMTP_URL is not set, so invitation e-mails are written to this log',
  )
  try {
    await untilStopped()
  } finally {
    await worker.stop()
    await database.close()
    logger.info(worker.stats, 'outbox worker stopped')
  }
  return 0
}
