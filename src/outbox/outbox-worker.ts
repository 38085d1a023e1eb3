import type { Logger } from 'pino'
import { isConnectionFailure } from '../db/connection-errors.js'
import type { OutboxRow } from '../db/schema.js'
import { createOutboundFetch, outboundPolicy } from '../http/outbound.js'
import { fixedShapeLines } from '../logger.js'
import { createMailer, type Mailer } from './mail/mailer.js'
import { composeMail, recordSendFailure, rowFields } from './mail-delivery.js'
import { deleteOldHistory, expireInvitations } from './maintenance.js'
import {
  claimDueRows,
  type LeasedRow,
  leasedRows,
  markSent,
  releaseLeases,
  WEBHOOK_KIND,
} from './outbox.repository.js'
import {
  DEFAULTS,
  HANDED_OVER_BATCH,
  MAX_HANDED_OVER,
  type OutboxWorkerDeps,
  type OutboxWorkerOptions,
  type OutboxWorkerStats,
  RETENTION_EVERY_MS,
  UNREACHABLE_POLL_MS,
} from './outbox-worker-options.js'
import { WebhookDeliverer } from './webhook-delivery.js'

export type { OutboxWorkerDeps, OutboxWorkerOptions, OutboxWorkerStats } from './outbox-worker-options.js'

/**
 * Delivers the outbox (docs/api.md#the-invitation-e-mail). Any number of workers, in any number of processes, may run against one
 * database: each claims due rows with FOR UPDATE SKIP LOCKED in a short statement, sends outside any
 * transaction, and marks the row sent. A failed send is retried with exponential backoff (and jitter, so
 * that many rows do not retry in step) until `maxAttempts`, then marked failed; a 5xx answer from the
 * SMTP server fails at once. Delivery is at least once: a worker that dies between sending and marking
 * leaves the row to be sent again when its lease runs out.
 */
export class OutboxWorker {
  readonly stats: OutboxWorkerStats = { sent: 0, retried: 0, failed: 0 }
  readonly #options: Required<Omit<OutboxWorkerOptions, 'mailer' | 'webhookFetch'>>
  readonly #mailer: Mailer
  readonly webhooks: WebhookDeliverer
  /** For the lines of every delivery: the log mailer's mail and 'e-mail sent' (fixed shapes). */
  readonly #lines: Logger
  #lastSweep = 0
  #lastRetention = 0
  #loop: Promise<void> | undefined
  #stopping = false
  #nudged = false
  #wake: (() => void) | undefined
  #unsubscribe: (() => void) | undefined

  constructor(
    private readonly deps: OutboxWorkerDeps,
    options: OutboxWorkerOptions = {},
  ) {
    const { mailer, webhookFetch, ...rest } = options
    this.#options = { ...DEFAULTS, ...rest }
    this.#lines = fixedShapeLines(deps.logger)
    this.webhooks = new WebhookDeliverer(deps, {
      baseBackoffMs: this.#options.webhookBaseBackoffMs,
      maxBackoffMs: this.#options.webhookMaxBackoffMs,
      disableAfterMs: this.#options.webhookDisableAfterMs,
      fetch: webhookFetch ?? createOutboundFetch(outboundPolicy(deps.config)),
    })
    this.#mailer =
      mailer ??
      createMailer({ smtpUrl: deps.config.smtpUrl, from: deps.config.mailFrom, logger: this.#lines })
  }

  get mailerKind(): Mailer['kind'] {
    return this.#mailer.kind
  }

  /** Starts polling; a nudge from a commit in this process wakes it at once. */
  start(): void {
    if (this.#loop) return
    this.#unsubscribe = this.deps.outboxSignal?.attach({
      lease: (now) =>
        this.#handedOver.length < MAX_HANDED_OVER && !this.#stopping
          ? new Date(now.getTime() + this.#options.leaseMs)
          : undefined,
      take: (rows) => {
        this.#handedOver.push(...rows)
        this.#nudge()
      },
    })
    this.#loop = this.#run()
  }

  /**
   * Finishes the batch in hand, stops polling, gives back the leases of handed-over rows it has not sent
   * (any worker's next scan takes them; without this they would wait for their leases to run out) and
   * closes the SMTP pool.
   */
  async stop(): Promise<void> {
    this.#stopping = true
    this.#unsubscribe?.()
    this.#nudge()
    await this.#loop
    const unsent = this.#handedOver.splice(0)
    await releaseLeases(this.deps.db, unsent).catch((error: unknown) =>
      this.deps.logger.warn(
        { err: error, rows: unsent.length },
        'outbox: could not release the leases of unsent rows; they are sent when their leases run out',
      ),
    )
    await this.#mailer.close()
  }

  /**
   * Claims one batch of due rows, sends them concurrently and marks the sent ones in one statement;
   * returns how many rows were claimed.
   */
  async runOnce(): Promise<number> {
    const now = this.deps.clock.now()
    const rows = await this.#claim(now, new Date(now.getTime() + this.#options.leaseMs))
    const outcomes = await Promise.all(rows.map((row) => this.#send(row)))
    const sent = rows.filter((_, i) => outcomes[i])
    if (sent.length > 0) await this.#markSent(sent)
    // A webhook's next event waits for this one: when one went, look again at once.
    this.#orderedSent = sent.some((row) => row.ordering_key !== null)
    return rows.length
  }

  #orderedSent = false

  /**
   * The rows this process's writes handed over, written already leased to this worker, are read by
   * primary key (leasedRows: no claim statement, no walk of the due index); the due index is scanned when
   * none is waiting, and at least once a poll interval besides, for the rest — rows of other processes,
   * retries, webhook deliveries, bulk loads' mail, rows whose lease ran out.
   */
  async #claim(now: Date, lockUntil: Date): Promise<OutboxRow[]> {
    const { batchSize, pollIntervalMs, leaseMs } = this.#options
    const sinceScan = performance.now() - this.#lastDueScan
    if (this.#handedOver.length === 0 || sinceScan >= pollIntervalMs) {
      this.#lastDueScan = performance.now()
      return claimDueRows(this.deps.db, now, lockUntil, batchSize)
    }
    // A send must end well within its lease, as it does after a claim: a row whose lease is half gone
    // (a long backlog) is left to run out, and the due scan claims it afresh then — as are the rows of a
    // batch whose read fails.
    const batch = this.#handedOver
      .splice(0, HANDED_OVER_BATCH)
      .filter((row) => row.lease.getTime() - now.getTime() >= leaseMs / 2)
    return leasedRows(this.deps.db, batch)
  }

  /** Rows handed over by this process's writes, not read yet; bounded (MAX_HANDED_OVER). */
  #handedOver: LeasedRow[] = []
  #lastDueScan = Number.NEGATIVE_INFINITY

  /**
   * The periodic work beside delivery: `invitation.expired` events for invitations whose window passed
   * (idempotent across workers: claimExpiredInvitations marks them in the same statement), and the
   * retention of audit events and delivery attempts (TENANTRY_AUDIT_RETENTION_DAYS).
   */
  async sweep(): Promise<void> {
    const { db, clock, config, logger } = this.deps
    const now = clock.now()
    await expireInvitations(db, clock)
    if (now.getTime() - this.#lastRetention >= RETENTION_EVERY_MS) {
      this.#lastRetention = now.getTime()
      await deleteOldHistory(db, now, config.auditRetentionDays, logger)
    }
  }

  async #run(): Promise<void> {
    // While the database is unreachable: one warning when it goes, one line when it is back, and a
    // slower poll in between (the pool opens a new connection on the first poll that finds it up).
    let unreachableSince: number | undefined
    while (!this.#stopping) {
      let claimed = 0
      let failed = false
      try {
        claimed = await this.runOnce()
        if (unreachableSince !== undefined) {
          this.deps.logger.info(
            { unreachableMs: Math.round(performance.now() - unreachableSince) },
            'outbox: the database is reachable again; delivering',
          )
          unreachableSince = undefined
        }
      } catch (error) {
        failed = true
        if (!isConnectionFailure(error)) {
          this.deps.logger.warn({ err: error }, 'outbox: could not claim mail; will try again')
        } else if (unreachableSince === undefined) {
          unreachableSince = performance.now()
          this.deps.logger.warn({ err: error }, 'outbox: the database is unreachable; waiting for it')
        }
      }
      if (Date.now() - this.#lastSweep >= this.#options.sweepIntervalMs) {
        this.#lastSweep = Date.now()
        await this.sweep().catch((error: unknown) =>
          this.deps.logger.warn({ err: error }, 'outbox: sweep failed; will try again'),
        )
      }
      const idle = unreachableSince !== undefined ? UNREACHABLE_POLL_MS : this.#options.pollIntervalMs
      // A full batch means more may be due, a sent webhook frees its endpoint's next event, and handed-over
      // rows wait to be sent; but after a failed claim, wait whatever is pending: no tight retry loop.
      const more = claimed >= this.#options.batchSize || this.#orderedSent || this.#handedOver.length > 0
      if (failed || !more) await this.#sleep(idle)
    }
  }

  /** Waits `ms`, or — when nudged before or during the wait — `coalesceMs` from the nudge; stop ends it. */
  #sleep(ms: number): Promise<void> {
    if (this.#stopping) return Promise.resolve()
    return new Promise((resolve) => {
      let timer = setTimeout(done, this.#nudged ? this.#options.coalesceMs : ms)
      const self = this
      function done() {
        clearTimeout(timer)
        self.#wake = undefined
        self.#nudged = false
        resolve()
      }
      this.#wake = () => {
        if (this.#stopping) return done()
        clearTimeout(timer)
        timer = setTimeout(done, this.#options.coalesceMs)
        this.#wake = undefined
      }
    })
  }

  #nudge(): void {
    this.#nudged = true
    this.#wake?.()
  }

  /** Sends one claimed row; true when the mail was handed over, false when it was recorded as failed. */
  async #send(row: OutboxRow): Promise<boolean> {
    if (row.kind === WEBHOOK_KIND) {
      try {
        return await this.webhooks.deliver(row)
      } catch (error) {
        // Not recorded: the lease runs out and the row is claimed again.
        this.#rowLogger(row).error({ err: error }, 'webhook delivery could not be recorded; will retry')
        return false
      }
    }
    try {
      await this.#mailer.send(composeMail(this.deps, row))
      return true
    } catch (error) {
      const outcome = await recordSendFailure(this.deps, this.#options, row, error, this.#rowLogger(row))
      if (outcome) this.stats[outcome] += 1
      return false
    }
  }

  async #markSent(rows: OutboxRow[]): Promise<void> {
    try {
      await markSent(
        this.deps.db,
        rows.map((row) => row.id),
        this.deps.clock.now(),
      )
    } catch (error) {
      // Sent but not recorded: the rows are sent again when their lease ends (at-least-once delivery).
      for (const row of rows) {
        this.#rowLogger(row).error(
          { err: error },
          'outbox: mail sent but not marked sent; it may be sent twice',
        )
      }
      return
    }
    this.stats.sent += rows.length
    for (const row of rows) {
      // The fields of #rowLogger, without making a child logger per row on this hot path.
      if (row.kind !== WEBHOOK_KIND) this.#lines.info({ ...rowFields(row), kind: row.kind }, 'e-mail sent')
    }
  }

  #rowLogger(row: OutboxRow): Logger {
    return this.deps.logger.child(rowFields(row))
  }
}
