import type { Config } from './config.js'
import type { ServiceContext } from './context.js'
import { sweepCounters } from './http/counter-store.js'
import { sweepIdempotencyKeys } from './http/idempotency.js'
import { OutboxWorker } from './outbox/outbox-worker.js'

export interface BackgroundWork {
  stop(): Promise<void>
}

const SWEEP_EVERY_MS = 3600 * 1000

/**
 * The work a server process runs beside the HTTP API: the outbox worker that delivers invitation mail
 * (unless TENANTRY_WORKER=off leaves it to `tenantry worker`), and an hourly sweep of idempotency
 * records past their 24-hour window and of ended rate-limit windows.
 */
export function startBackgroundWork(ctx: ServiceContext, config: Config): BackgroundWork {
  const sweeper = startIdempotencySweep(ctx)
  if (!config.inProcessWorker) {
    ctx.logger.info(
      'outbox worker is off in this process (TENANTRY_WORKER=off): run `tenantry worker` to send mail',
    )
    return { stop: async () => sweeper.stop() }
  }
  const worker = new OutboxWorker({ ...ctx, config })
  worker.start()
  ctx.logger.info(
    worker.mailerKind === 'smtp'
      ? 'outbox worker started: invitation e-mail goes out over SMTP'
      : 'outbox worker started: TENANTRY_SMTP_URL is not set, so invitation e-mails are written to this log',
  )
  return {
    stop: async () => {
      sweeper.stop()
      await worker.stop()
    },
  }
}

function startIdempotencySweep(ctx: ServiceContext): { stop(): void } {
  const sweep = () => {
    sweepIdempotencyKeys(ctx.db, ctx.clock.now()).catch((error: unknown) =>
      ctx.logger.warn({ err: error }, 'idempotency sweep failed'),
    )
    sweepCounters(ctx.db, ctx.clock.now()).catch((error: unknown) =>
      ctx.logger.warn({ err: error }, 'rate-limit counter sweep failed'),
    )
  }
  const timer = setInterval(sweep, SWEEP_EVERY_MS)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
