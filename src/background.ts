import type { Config } from './config.js'
import type { ServiceContext } from './context.js'
import { OutboxWorker } from './mail/outbox-worker.js'

export interface BackgroundWork {
  stop(): Promise<void>
}

/**
 * The work a server process runs beside the HTTP API: the outbox worker that delivers invitation mail
 * (unless TENANTRY_WORKER=off leaves it to `tenantry worker`).
 */
export function startBackgroundWork(ctx: ServiceContext, config: Config): BackgroundWork {
  if (!config.inProcessWorker) {
    ctx.logger.info(
      'outbox worker is off in this process (TENANTRY_WORKER=off): run `tenantry worker` to send mail',
    )
    return { stop: async () => {} }
  }
  const worker = new OutboxWorker({ ...ctx, config })
  worker.start()
  ctx.logger.info(
    worker.mailerKind === 'smtp'
      ? 'outbox worker started: invitation e-mail goes out over SMTP'
      : 'outbox worker started: TENANTRY_SMTP_URL is not set, so invitation e-mails are written to this log',
  )
  return { stop: () => worker.stop() }
}
