import type { Config } from './config.js'
import type { ServiceContext } from './context.js'
import { sweepCounters } from './http/counter-store.js'
import { sweepIdempotencyKeys } from './http/idempotency.js'
import { deleteEndedSessions } from './modules/auth/session-store.repository.js'
import { deleteExpiredChallenges } from './modules/mfa/challenges.repository.js'
import { deleteStalePendingFactors } from './modules/mfa/factors.repository.js'
import { PENDING_TOTP_MS } from './modules/mfa/factors.service.js'
import { deleteExpiredSsoRequests } from './modules/sso/sso.repository.js'
import { forgetExpiredPreviousSecrets } from './modules/webhooks/webhooks.repository.js'
import { OutboxWorker } from './outbox/outbox-worker.js'

export interface BackgroundWork {
  stop(): Promise<void>
}

const SWEEP_EVERY_MS = 3600 * 1000

/**
 * The work a server process runs beside the HTTP API: the outbox worker that delivers invitation mail
 * (unless TENANTRY_WORKER=off leaves it to `tenantry worker`), and an hourly sweep of records past
 * their use (sweepExpired). `workerDb`: the worker's own connections to a server database, so that its
 * statements do not queue behind the requests' in the API's pool (under load they would wait for a
 * connection with every batch, and mail would fall behind); by default the API's.
 */
export function startBackgroundWork(
  ctx: ServiceContext,
  config: Config,
  workerDb: ServiceContext['db'] = ctx.db,
): BackgroundWork {
  const sweeper = startHourlySweep(ctx)
  if (!config.inProcessWorker) {
    ctx.logger.info(
      'outbox worker is off in this process (TENANTRY_WORKER=off): run `tenantry worker` to send mail',
    )
    return { stop: async () => sweeper.stop() }
  }
  const worker = new OutboxWorker({ ...ctx, db: workerDb, config })
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

/**
 * Drops what has outlived its use: idempotency records past their 24-hour window, ended rate-limit
 * windows, single sign-on login requests, replay-cache entries and test sign-ins past their expiry,
 * webhook secrets replaced by a rotation more than 24 hours ago, sessions whose tokens have all expired,
 * second-factor challenges past their five minutes and authenticator apps never confirmed within ten
 * (docs/security.md; a pending one is refused after ten minutes whether swept or not). Each sweep on
 * its own: one failing does not stop the others.
 */
export async function sweepExpired(ctx: Pick<ServiceContext, 'db' | 'clock' | 'logger'>): Promise<void> {
  const now = ctx.clock.now()
  const sweeps: [string, () => Promise<unknown>][] = [
    ['idempotency', () => sweepIdempotencyKeys(ctx.db, now)],
    ['rate-limit counter', () => sweepCounters(ctx.db, now)],
    ['single sign-on request', () => deleteExpiredSsoRequests(ctx.db, now)],
    ['replaced webhook secret', () => forgetExpiredPreviousSecrets(ctx.db, now)],
    ['ended session', () => deleteEndedSessions(ctx.db, now)],
    ['second-factor challenge', () => deleteExpiredChallenges(ctx.db, now)],
    [
      'unconfirmed second factor',
      () => deleteStalePendingFactors(ctx.db, new Date(now.getTime() - PENDING_TOTP_MS)),
    ],
  ]
  for (const [name, sweep] of sweeps) {
    await sweep().catch((error: unknown) => ctx.logger.warn({ err: error }, `${name} sweep failed`))
  }
}

function startHourlySweep(ctx: ServiceContext): { stop(): void } {
  const sweep = () => {
    void sweepExpired(ctx)
  }
  const timer = setInterval(sweep, SWEEP_EVERY_MS)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
