import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from './app.js'
import { startBackgroundWork } from './background.js'
import { bootstrap } from './bootstrap.js'
import { type Clock, systemClock } from './clock.js'
import type { Config } from './config.js'
import { resolveKeys } from './crypto/keys.js'
import { type DatabaseHandle, openDatabase, redactDatabaseUrl } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'
import { startTracing } from './tracing.js'

export interface RunningServer {
  app: FastifyInstance
  url: string
  database: DatabaseHandle
  close(): Promise<void>
}

/**
 * start(config): open the database, migrate, bootstrap, build the app, listen, start the in-process
 * outbox worker. `close()` stops accepting, lets in-flight requests finish, stops the worker and closes
 * the database.
 */
export async function start(
  config: Config,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<RunningServer> {
  const keys = resolveKeys(config, logger)
  const tracing = config.otlpEndpoint ? startTracing(config.otlpEndpoint) : undefined
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    prepare: config.preparedStatements,
    onConnectionError: (error) =>
      logger.warn({ err: error }, 'a database connection failed; the pool replaces it'),
  })
  let workerDatabase: DatabaseHandle | undefined
  try {
    const { applied } = await migrateToLatest(database.db)
    if (applied.length > 0) logger.info({ applied }, 'database migrated')
    const { platform, admin } = await bootstrap(database.db, clock, {
      email: config.adminEmail,
      password: config.adminPassword,
    })
    const { app, ctx } = await buildApp({
      db: database.db,
      config,
      clock,
      keys,
      logger,
      platform,
      ...(database.poolStats ? { poolStats: database.poolStats } : {}),
      ...(tracing ? { tracing: tracing.instrumentation } : {}),
    })
    await app.listen({ port: config.port, host: config.host })
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : config.port
    const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`
    // The in-process worker's own two connections to a server database (background.ts says why).
    workerDatabase =
      database.kind === 'postgres' && config.inProcessWorker
        ? await openDatabase({
            url: config.databaseUrl,
            dataDir: config.dataDir,
            poolSize: 2,
            applicationName: 'tenantry outbox worker',
            prepare: config.preparedStatements,
            onConnectionError: (error) =>
              logger.warn({ err: error }, "a worker's database connection failed; the pool replaces it"),
          })
        : undefined
    const background = startBackgroundWork(ctx, config, workerDatabase?.db)

    const where = config.databaseUrl
      ? redactDatabaseUrl(config.databaseUrl)
      : `embedded database in ${config.dataDir}`
    logger.info({ url, database: where }, `Tenantry listening on ${url}`)
    if (config.console) logger.info(`The console: ${url}/console (sign in with the administrator below)`)
    if (admin?.generated) {
      // The generated password goes to the terminal only: a log shipper must never store it (docs/operations.md#logs).
      logger.info(
        { email: admin.email },
        'First start: the generated administrator password is on standard error',
      )
      process.stderr.write(
        `First start: log in as ${admin.email} with password ${admin.password} (shown once; set TENANTRY_ADMIN_PASSWORD to choose it)\n`,
      )
    } else if (admin) {
      logger.info(
        { email: admin.email },
        `First start: log in as ${admin.email} with the password from TENANTRY_ADMIN_PASSWORD`,
      )
    }
    logger.info(
      `API reference: ${url}/docs — get a token: curl -X POST ${url}/v1/tokens -H 'Content-Type: application/json' -d '{"username":"…","password":"…"}'`,
    )

    let closing: Promise<void> | undefined
    const close = () => {
      closing ??= (async () => {
        await app.close()
        await background.stop()
        await workerDatabase?.close()
        await database.close()
        await tracing?.shutdown()
      })()
      return closing
    }
    return { app, url, database, close }
  } catch (error) {
    await workerDatabase?.close().catch(() => {})
    await database.close().catch(() => {})
    await tracing?.shutdown().catch(() => {})
    throw error
  }
}
