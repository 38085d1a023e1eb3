import { randomBytes } from 'node:crypto'
import type { BenchDatabase } from './database.js'
import type { BenchOptions } from './options.js'
import { freePort, PRODUCTION_NODE_FLAGS, type Service, startService } from './processes.js'

/**
 * The two processes under load: Tenantry as production runs it (the compiled build with the production
 * V8 flags, `serve`, LOG_LEVEL info with Fastify's request log, the in-process outbox worker), and the
 * ceiling process.
 */
export async function startTenantry(
  database: BenchDatabase,
  admin: { email: string; password: string },
  options: Pick<BenchOptions, 'serverEntry' | 'serverLog' | 'profileDir' | 'serverEnv'> & {
    /** More node flags after production's, e.g. --trace-gc (flags NODE_OPTIONS refuses). */
    nodeFlags?: string[]
    readyTimeoutMs?: number
  },
): Promise<Service> {
  const port = await freePort()
  return startService({
    name: 'tenantry',
    args: [
      ...PRODUCTION_NODE_FLAGS,
      ...profileArgs(options.profileDir, 'tenantry'),
      ...(options.nodeFlags ?? []),
      options.serverEntry,
      'serve',
    ],
    env: {
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      TENANTRY_DATA_DIR: database.dataDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      TENANTRY_SECRET_KEY: randomBytes(32).toString('base64'),
      TENANTRY_ADMIN_EMAIL: admin.email,
      TENANTRY_ADMIN_PASSWORD: admin.password,
      ...options.serverEnv,
    },
    port,
    logFile: options.serverLog,
    readyPath: '/healthz',
    ...(options.readyTimeoutMs ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
  })
}

export async function startCeiling(
  database: BenchDatabase,
  profileDir: string | undefined,
): Promise<Service> {
  const port = await freePort()
  return startService({
    name: 'ceiling',
    args: [...profileArgs(profileDir, 'ceiling'), '--import', 'tsx', 'bench/lib/ceiling-server.ts'],
    env: {
      PORT: String(port),
      LOG_LEVEL: 'info',
      ...('url' in database.ceiling
        ? { CEILING_DATABASE_URL: database.ceiling.url }
        : { CEILING_DATA_DIR: database.ceiling.dataDir }),
    },
    port,
    readyPath: '/healthz',
  })
}

function profileArgs(dir: string | undefined, name: string): string[] {
  // A folder per process: with tsx, the loader thread writes a profile of its own beside the main one.
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}/${name}`] : []
}
