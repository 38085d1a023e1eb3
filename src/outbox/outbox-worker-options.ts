import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Keys } from '../crypto/keys.js'
import type { Database } from '../db/schema.js'
import type { OutboundFetch } from '../http/outbound.js'
import type { Mailer } from './mail/mailer.js'
import type { OutboxSignal } from './outbox-signal.js'

/** What an outbox worker (outbox-worker.ts) is given, and how it can be tuned. */

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
  /** How often to look for due rows when not nudged; docs/api.md#the-invitation-e-mail wants new mail out within a second. */
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
  /** An endpoint failing this long is disabled; default 24 h (docs/webhooks.md). */
  webhookDisableAfterMs?: number
  /** How webhooks are sent; default outboundFetch under the configured outbound rule. */
  webhookFetch?: OutboundFetch
  /** How often the invitation-expiry sweep runs (docs/webhooks.md: within a minute); default 20 s. */
  sweepIntervalMs?: number
}

export const DEFAULTS = {
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
export const UNREACHABLE_POLL_MS = 1_000
/**
 * Rows handed over and not sent yet; past this many, writes are given no lease and the due scan finds
 * their rows (a burst, a slow SMTP server).
 */
export const MAX_HANDED_OVER = 10_000
/**
 * Handed-over rows read and sent at once. Bigger than a claim's batch: the read is by primary key, and
 * each batch waits for its mark's commit, so under a burst of invitations larger batches are what keeps
 * delivery up with the writes (with 20, a busy machine fell behind: docs/performance.md).
 */
export const HANDED_OVER_BATCH = 100
/** Retention runs at most this often (it deletes in bounded batches). */
export const RETENTION_EVERY_MS = 3_600_000

export interface OutboxWorkerStats {
  sent: number
  retried: number
  failed: number
}
