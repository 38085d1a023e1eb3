import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Keys } from '../crypto/keys.js'
import type { Database, OutboxRow } from '../db/schema.js'
import { recordAudit } from './audit-trail.js'
import { openFactorResetMail, renderFactorResetMail } from './mail/factor-reset-mail.js'
import { openInvitationMail, UndeliverableMail } from './mail/invitation-mail.js'
import { renderInvitationMail } from './mail/invitation-template.js'
import { invitationLink, passwordResetLink } from './mail/links.js'
import { type OutgoingMail, PermanentMailError } from './mail/mailer.js'
import { openPasswordResetMail } from './mail/password-reset-mail.js'
import { renderPasswordResetMail } from './mail/password-reset-template.js'
import {
  FACTOR_RESET_EMAIL,
  INVITATION_EMAIL,
  markFailed,
  markRetry,
  PASSWORD_RESET_EMAIL,
} from './outbox.repository.js'

/** The outbox worker's mail: what a row's mail says, and what a mail that fails for good leaves. */

/** The mail of a claimed row, by its kind; the link is made from the decrypted token here. */
export function composeMail(
  deps: {
    keys: Pick<Keys, 'secretKey' | 'secretKeyId'>
    config: Pick<Config, 'publicUrl'> & Partial<Pick<Config, 'invitationUrl' | 'passwordResetUrl'>>
  },
  row: OutboxRow,
): OutgoingMail {
  const links = { invitationUrl: undefined, passwordResetUrl: undefined, ...deps.config }
  if (row.kind === INVITATION_EMAIL) {
    const { facts, token } = openInvitationMail(deps.keys, row.id, row.payload)
    const link = invitationLink(links, { token, userId: facts.userId, tenantId: facts.tenantId })
    return { to: facts.to, ...renderInvitationMail(facts, link) }
  }
  if (row.kind === PASSWORD_RESET_EMAIL) {
    const { facts, token } = openPasswordResetMail(deps.keys, row.id, row.payload)
    const link = passwordResetLink(links, { token, userId: facts.userId })
    return { to: facts.to, ...renderPasswordResetMail(facts, link) }
  }
  if (row.kind === FACTOR_RESET_EMAIL) {
    const facts = openFactorResetMail(row.payload)
    return { to: facts.to, ...renderFactorResetMail(facts) }
  }
  throw new UndeliverableMail(`unknown outbox kind "${row.kind}"`)
}

/**
 * Records a send that failed: a permanent failure (a 5xx answer, an undeliverable row) or the last
 * attempt marks the row failed for good; otherwise it is retried after backoffMs. Answers which, or
 * nothing when even that could not be recorded (the lease runs out and the row is claimed again).
 */
export async function recordSendFailure(
  deps: { db: Kysely<Database>; clock: Clock },
  options: { maxAttempts: number; baseBackoffMs: number; maxBackoffMs: number },
  row: OutboxRow,
  error: unknown,
  log: Logger,
): Promise<'failed' | 'retried' | undefined> {
  const message = (error instanceof Error ? error.message : String(error)).slice(0, 1_000)
  const permanent = error instanceof PermanentMailError || error instanceof UndeliverableMail
  try {
    if (permanent || row.attempts >= options.maxAttempts) {
      const reason = permanent ? message : `gave up after ${row.attempts} attempts: ${message}`
      await recordFailedMail(deps, row, reason)
      log.error({ reason }, 'e-mail failed for good')
      return 'failed'
    }
    const delay = backoffMs(row.attempts, options.baseBackoffMs, options.maxBackoffMs)
    const next = new Date(deps.clock.now().getTime() + delay)
    await markRetry(deps.db, row.id, message, next)
    log.warn({ error: message, nextAttemptAt: next.toISOString() }, 'e-mail not sent; will retry')
    return 'retried'
  } catch (dbError) {
    log.error({ err: dbError }, 'outbox: could not record a failed send')
    return undefined
  }
}

/** Marks a row failed for good, with its `invitation.email_failed` event, in one transaction. */
export async function recordFailedMail(
  deps: { db: Kysely<Database>; clock: Clock },
  row: OutboxRow,
  reason: string,
): Promise<void> {
  await deps.db.transaction().execute(async (tx) => {
    await markFailed(tx, row.id, reason)
    const userId = (row.payload as { userId?: unknown }).userId
    await recordAudit(
      tx,
      deps.clock,
      { kind: 'system' },
      {
        action: 'invitation.email_failed',
        tenantId: row.tenant_id,
        target: { type: 'membership', id: typeof userId === 'string' ? userId : null },
        changes: { reason: [null, reason] },
      },
    )
  })
}

/** The delay before retry `attempt`: base · 2^(attempt−1), capped, with ±20 % jitter. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const delay = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1))
  return Math.round(delay * (0.8 + Math.random() * 0.4))
}

/** What every log line about one outbox row carries. */
export function rowFields(row: OutboxRow): { outboxId: string; tenantId: string | null; attempt: number } {
  return { outboxId: row.id, tenantId: row.tenant_id, attempt: row.attempts }
}
