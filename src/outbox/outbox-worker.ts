import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Keys } from '../crypto/keys.js'
import { isConnectionFailure } from '../db/connection-errors.js'
import type { Database, OutboxRow } from '../db/schema.js'
import { createOutboundFetch, type OutboundFetch, outboundPolicy } from '../http/outbound.js'
import { fixedShapeLines } from '../logger.js'
import { recordAudit } from './audit-trail.js'
import { openInvitationMail, UndeliverableMail } from './mail/invitation-mail.js'
import { renderInvitationMail } from './mail/invitation-template.js'
import { invitationLink, passwordResetLink } from './mail/links.js'
import { createMailer, type Mailer, type OutgoingMail, PermanentMailError } from './mail/mailer.js'
import { openPasswordResetMail, renderPasswordResetMail } from './mail/password-reset-mail.js'
import {
  claimDueRows,
  INVITATION_EMAIL,
  type LeasedRow,
  leasedRows,
  markFailed,
  markRetry,
  markSent,
  PASSWORD_RESET_EMAIL,
  releaseLeases,
  WEBHOOK_KIND,
} from './outbox.repository.js'
import type { OutboxSignal } from './outbox-signal.js'
import { claimExpiredInvitations, deleteAttemptsBefore, deleteEventsBefore } from './webhook.repository.js'
import { WebhookDeliverer } from './webhook-delivery.js'

export interface OutboxWorkerDeps {
  db: Kysely<Database>
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>
  logger: Logger
  clock: Clock
  config: Pick<
    Config,
    'publicUrl' | 'smtpUrl' | 'mailFrom' | 'outboundAllowHttp' | 'outboundAllowPrivate' | 'auditRetentionDays'
  > &
    Partial<Pick<Config, 'invitationUrl' | 'passwordResetUrl'>>
  /**
   * The application's signal, when the worker runs in its process: writes hand it their rows already
   * leased to it, and a commit that queued mail wakes it.
   */
  outboxSignal?: OutboxSignal
}

export interface OutboxWorkerOptions {
  /** How often to look for due rows when not nudged; API.md §6 wants new mail out within a second. */
  pollIntervalMs?: number
  /**
   * After a nudge, how long to let more commits arrive before claiming: under a burst of invitations one
   * claim and one mark then serve many mails instead of one each.
   */
  coalesceMs?: number
  /** Rows claimed at once; they are sent concurrently over the SMTP pool. */
  batchSize?: number
  /** How long a claimed row is reserved for this worker; a send always ends well within it. */
  leaseMs?: number
  /** Attempts before a row is marked failed. */
  maxAttempts?: number
  /** First retry delay; it doubles with every attempt, up to `maxBackoffMs`. */
  baseBackoffMs?: number
  maxBackoffMs?: number
  /** Where mail goes; by default SMTP from the config, or the log without it. */
  mailer?: Mailer
  /** Webhook retries: first delay (doubling) and its cap; default 5 s and 1 h. */
  webhookBaseBackoffMs?: number
  webhookMaxBackoffMs?: number
  /** An endpoint failing this long is disabled; default 24 h (API.md §13). */
  webhookDisableAfterMs?: number
  /** How webhooks are sent; default outboundFetch under the configured outbound rule. */
  webhookFetch?: OutboundFetch
  /** How often the invitation-expiry sweep runs (API.md §13: within a minute); default 20 s. */
  sweepIntervalMs?: number
}

const DEFAULTS = {
  pollIntervalMs: 250,
  coalesceMs: 20,
  batchSize: 20,
  leaseMs: 120_000,
  // 5 s, 10 s, 20 s … capped at 1 h: twelve attempts span about five hours.
  maxAttempts: 12,
  baseBackoffMs: 5_000,
  maxBackoffMs: 3_600_000,
  webhookBaseBackoffMs: 5_000,
  webhookMaxBackoffMs: 3_600_000,
  webhookDisableAfterMs: 24 * 3_600_000,
  sweepIntervalMs: 20_000,
} as const

/** The poll interval while the database is unreachable: recovery is noticed within a second. */
const UNREACHABLE_POLL_MS = 1_000
/**
 * Rows handed over and not sent yet; past this many, writes are given no lease and the due scan finds
 * their rows (a burst, a slow SMTP server).
 */
const MAX_HANDED_OVER = 10_000
/**
 * Handed-over rows read and sent at once. Bigger than a claim's batch: the read is by primary key, and
 * each batch waits for its mark's commit, so under a burst of invitations larger batches are what keeps
 * delivery up with the writes (with 20, a busy machine fell behind: docs/performance.md).
 */
const HANDED_OVER_BATCH = 100
/** Retention runs at most this often (it deletes in bounded batches). */
const RETENTION_EVERY_MS = 3_600_000

export interface OutboxWorkerStats {
  sent: number
  retried: number
  failed: number
}

/**
 * Delivers the outbox (API.md §6). Any number of workers, in any number of processes, may run against one
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
    const { db, clock } = this.deps
    const now = clock.now()
    await db.transaction().execute(async (tx) => {
      const expired = await claimExpiredInvitations(tx, now)
      await recordAudit(
        tx,
        clock,
        { kind: 'system' },
        expired.map((row) => ({
          action: 'invitation.expired',
          tenantId: row.tenant_id,
          target: { type: 'membership', id: row.user_id },
          changes: { invitationExpiryDate: [row.invitation_expiry_date?.toISOString() ?? null, null] },
        })),
      )
    })
    if (now.getTime() - this.#lastRetention >= RETENTION_EVERY_MS) {
      this.#lastRetention = now.getTime()
      const before = new Date(now.getTime() - this.deps.config.auditRetentionDays * 86_400_000)
      let deleted = 0
      for (
        let batch = await deleteEventsBefore(db, before);
        batch > 0;
        batch = await deleteEventsBefore(db, before)
      ) {
        deleted += batch
      }
      await deleteAttemptsBefore(db, before)
      if (deleted > 0)
        this.deps.logger.info(
          { deleted, before: before.toISOString() },
          'audit retention: old events deleted',
        )
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
      await this.#mailer.send(this.#compose(row))
      return true
    } catch (error) {
      await this.#failed(row, error, this.#rowLogger(row))
      return false
    }
  }

  /** The mail of a claimed row, by its kind; the link is made from the decrypted token here. */
  #compose(row: OutboxRow): OutgoingMail {
    const links = { invitationUrl: undefined, passwordResetUrl: undefined, ...this.deps.config }
    if (row.kind === INVITATION_EMAIL) {
      const { facts, token } = openInvitationMail(this.deps.keys, row.id, row.payload)
      const link = invitationLink(links, { token, userId: facts.userId, tenantId: facts.tenantId })
      return { to: facts.to, ...renderInvitationMail(facts, link) }
    }
    if (row.kind === PASSWORD_RESET_EMAIL) {
      const { facts, token } = openPasswordResetMail(this.deps.keys, row.id, row.payload)
      const link = passwordResetLink(links, { token, userId: facts.userId })
      return { to: facts.to, ...renderPasswordResetMail(facts, link) }
    }
    throw new UndeliverableMail(`unknown outbox kind "${row.kind}"`)
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

  async #failed(row: OutboxRow, error: unknown, log: Logger): Promise<void> {
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 1_000)
    const permanent = error instanceof PermanentMailError || error instanceof UndeliverableMail
    try {
      if (permanent || row.attempts >= this.#options.maxAttempts) {
        const reason = permanent ? message : `gave up after ${row.attempts} attempts: ${message}`
        await this.deps.db.transaction().execute(async (tx) => {
          await markFailed(tx, row.id, reason)
          const userId = (row.payload as { userId?: unknown }).userId
          await recordAudit(
            tx,
            this.deps.clock,
            { kind: 'system' },
            {
              action: 'invitation.email_failed',
              tenantId: row.tenant_id,
              target: { type: 'membership', id: typeof userId === 'string' ? userId : null },
              changes: { reason: [null, reason] },
            },
          )
        })
        this.stats.failed += 1
        log.error({ reason }, 'e-mail failed for good')
        return
      }
      const next = new Date(this.deps.clock.now().getTime() + this.#backoff(row.attempts))
      await markRetry(this.deps.db, row.id, message, next)
      this.stats.retried += 1
      log.warn({ error: message, nextAttemptAt: next.toISOString() }, 'e-mail not sent; will retry')
    } catch (dbError) {
      // The lease runs out and the row is claimed again: nothing is lost.
      log.error({ err: dbError }, 'outbox: could not record a failed send')
    }
  }

  /** 5 s · 2^(attempt−1), capped, with ±20 % jitter. */
  #backoff(attempt: number): number {
    const { baseBackoffMs, maxBackoffMs } = this.#options
    const delay = Math.min(maxBackoffMs, baseBackoffMs * 2 ** Math.max(0, attempt - 1))
    return Math.round(delay * (0.8 + Math.random() * 0.4))
  }
}

/** What every log line about one outbox row carries. */
function rowFields(row: OutboxRow): { outboxId: string; tenantId: string | null; attempt: number } {
  return { outboxId: row.id, tenantId: row.tenant_id, attempt: row.attempts }
}
