#!/usr/bin/env node
import { ConfigError, loadConfig } from './config.js'
import { createLogger, wantsPrettyLogs } from './logger.js'

/** The `tenantry` command: serve (default) | migrate | worker | users import. */
const USAGE = `Usage: tenantry [serve | migrate | worker | users import FILE [options]]

  serve          run the HTTP service (default)
  migrate        bring the database schema up to date and exit
  worker         run the outbox worker alone (delivers invitation e-mail)
  users import   import users from a CSV or NDJSON file into a running server (see --help)
`

async function main(argv: string[]): Promise<number> {
  const [command = 'serve'] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  // A client of a running server over HTTP: it needs no server configuration.
  if (command === 'users') return (await import('./cli/users-import.js')).runUsersCommand(argv.slice(1))

  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
      return 78 // EX_CONFIG
    }
    throw error
  }
  const logger = createLogger(config.logLevel, undefined, {
    pretty: wantsPrettyLogs(config.logFormat, process.stdout.isTTY === true),
    traceIds: config.otlpEndpoint !== undefined,
  })

  switch (command) {
    case 'serve': {
      const { start } = await import('./server.js')
      // A reason not to start (the data folder in use, the database unreachable) ends in main's catch:
      // one line on standard error, exit code 1.
      const server = await start(config, logger)
      await untilSignal(logger)
      await server.close()
      return 0
    }
    case 'migrate': {
      const { runMigrateCommand } = await import('./cli/migrate.js')
      return runMigrateCommand(config, logger)
    }
    case 'worker': {
      const { runWorkerCommand } = await import('./cli/worker.js')
      return runWorkerCommand(config, logger, () => untilSignal(logger))
    }
    default:
      process.stderr.write(`Unknown command "${command}".\n${USAGE}`)
      return 64 // EX_USAGE
  }
}

/** Resolves on the first SIGTERM or SIGINT. */
export function untilSignal(logger: { info(msg: string): void }): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      logger.info(`${signal} received: finishing in-flight work and shutting down`)
      resolve()
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  })
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`tenantry: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
