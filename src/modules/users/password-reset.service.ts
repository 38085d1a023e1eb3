import type { Actor, UserActor } from '../../access/actor.js'
import type { Clock } from '../../clock.js'
import type { ServiceContext } from '../../context.js'
import { hashPassword } from '../../crypto/passwords.js'
import { randomSecret, sha256 } from '../../crypto/tokens.js'
import type { UserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { type CounterStore, FailureLimiter } from '../../http/rate-limit.js'
import { type AuditActor, type Changes, MASKED } from '../../outbox/audit-event.js'
import { recordAudit } from '../../outbox/audit-trail.js'
import { passwordResetMailRow } from '../../outbox/mail/password-reset-mail.js'
import type { NewOutboxRow } from '../../outbox/outbox.repository.js'
import { deleteQueuedPasswordResetMail } from '../../outbox/password-reset-mail.repository.js'
import { type UnitTransaction, writeUnit } from '../../outbox/write-unit.js'
import { WWW_AUTHENTICATE } from '../auth/unauthorized.js'
import {
  findUserByResetTokenHash,
  setPasswordWithResetToken,
  storeResetToken,
} from './password-reset.repository.js'
import { normalizeEmail } from './user-rules.js'
import { findUserByEmail } from './users.repository.js'

/**
 * Password reset (docs/api.md#passwords-and-the-existing-clients-flows). A reset link carries a one-time token of 256 random bits; the database
 * keeps its SHA-256 on the user row with its expiry (TENANTRY_PASSWORD_RESET_TTL), a newer link replaces
 * the older one, and setting the password spends it. The mail goes through the outbox in the same
 * transaction as the token, so it is sent once SMTP is reachable and its delivery state is visible.
 */

/** Requests per e-mail address (known or not) and per client address, each an hour. */
export const RESET_REQUESTS_PER_EMAIL = 5
export const RESET_REQUESTS_PER_ADDRESS = 30
const HOUR_MS = 3_600_000

export interface ResetLimits {
  byEmail: FailureLimiter
  byAddress: FailureLimiter
}

/** The two reset-request limiters of one application, in its counter store; buildApp puts them on the context. */
export function createPasswordResetLimiters(clock: Clock, counters: CounterStore): ResetLimits {
  const now = () => clock.now().getTime()
  return {
    byEmail: new FailureLimiter(RESET_REQUESTS_PER_EMAIL, HOUR_MS, now, counters, 'password-reset-email'),
    byAddress: new FailureLimiter(
      RESET_REQUESTS_PER_ADDRESS,
      HOUR_MS,
      now,
      counters,
      'password-reset-address',
    ),
  }
}

/**
 * `PUT|POST /v1/request-password-reset {email}`: queues a reset mail when the address names an existing
 * user who is not disabled, and does nothing otherwise — the caller learns nothing either way (the route
 * also evens out the time). Both limits count every request, known address or not.
 */
export async function requestPasswordReset(
  ctx: ServiceContext,
  email: string,
  address: string,
): Promise<void> {
  const key = normalizeEmail(email)
  const limits = ctx.passwordResetLimiters
  await rephrase(() => limits.byAddress.check(address), 'Too many password-reset requests from this address')
  await rephrase(() => limits.byEmail.check(key), 'Too many password-reset requests for this e-mail address')
  await limits.byAddress.fail(address)
  await limits.byEmail.fail(key)
  const user = await findUserByEmail(ctx.db, key)
  if (!user || user.status === 'disabled') return
  await issuePasswordReset(ctx, user, { kind: 'system' }, 'self')
}

/**
 * Issues a new reset link for `user` and queues its mail, in one transaction with its audit event.
 * `requestedBy` is what the mail says: 'self' or the administrator's name. Returns the link's expiry.
 */
export async function issuePasswordReset(
  ctx: ServiceContext,
  user: UserRow,
  actor: AuditActor,
  requestedBy: string,
): Promise<Date> {
  const reset = preparePasswordReset(ctx, user, requestedBy, ctx.clock.now())
  await writeUnit(ctx).transaction(async (tx) => {
    await writePasswordReset(tx, user.id, reset)
    await recordAudit(tx.db, ctx.clock, actor, {
      action: 'user.password_reset_requested',
      tenantId: null,
      target: { type: 'user', id: user.id },
      changes: resetChanges(user, reset),
    })
  })
  return reset.expiresAt
}

/** A new reset link, ready to be written: its token's hash, its expiry and the mail that carries it. */
export interface PreparedReset {
  tokenHash: string
  expiresAt: Date
  mail: NewOutboxRow
}

/** A new link for `user`: its token only in the mail's sealed envelope. */
export function preparePasswordReset(
  ctx: ServiceContext,
  user: Pick<UserRow, 'id' | 'email'>,
  requestedBy: string,
  now: Date,
): PreparedReset {
  const token = randomSecret()
  const expiresAt = new Date(now.getTime() + ctx.config.passwordResetTtlSeconds * 1000)
  const mail = passwordResetMailRow(
    ctx.keys,
    { userId: user.id, to: user.email, expiresAt: expiresAt.toISOString(), requestedBy },
    token,
    now,
  )
  return { tokenHash: sha256(token), expiresAt, mail }
}

/**
 * Writes a prepared link in the unit's transaction: the hash and expiry on the user, its mail replacing
 * one still queued (whose link is dead now).
 */
export async function writePasswordReset(
  tx: UnitTransaction,
  userId: string,
  reset: PreparedReset,
): Promise<void> {
  await storeResetToken(tx.db, userId, reset.tokenHash, reset.expiresAt)
  await deleteQueuedPasswordResetMail(tx.db, userId)
  await tx.mail(reset.mail)
}

/** What a new link changes on the user, for its audit event. */
export function resetChanges(
  user: Pick<UserRow, 'reset_password_expiry_date'>,
  reset: PreparedReset,
): Changes {
  return {
    resetPasswordExpiryDate: [
      user.reset_password_expiry_date?.toISOString() ?? null,
      reset.expiresAt.toISOString(),
    ],
  }
}

/** What a reset token is worth: its user while live; `expired` past its expiry; nothing otherwise. */
export type ResetLookup =
  | { state: 'live'; user: UserRow; tokenHash: string }
  | { state: 'expired' }
  | undefined

export async function lookUpResetToken(ctx: ServiceContext, token: string): Promise<ResetLookup> {
  if (!RESET_TOKEN_SHAPE.test(token)) return undefined
  const tokenHash = sha256(token)
  const user = await findUserByResetTokenHash(ctx.db, tokenHash)
  if (!user || user.status === 'disabled') return undefined
  const expiry = user.reset_password_expiry_date
  if (!expiry || expiry.getTime() <= ctx.clock.now().getTime()) return { state: 'expired' }
  return { state: 'live', user, tokenHash }
}

const RESET_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/

export function resetTokenRefused(expired: boolean): AppError {
  return expired
    ? new AppError(
        'reset_token_expired',
        'This password-reset link has expired; ask for a new one',
        undefined,
        {
          'www-authenticate': WWW_AUTHENTICATE,
        },
      )
    : new AppError(
        'unauthorized',
        'This password-reset link is not valid: it was already used or replaced by a newer one',
        undefined,
        { 'www-authenticate': WWW_AUTHENTICATE },
      )
}

/**
 * Sets a new password with a live reset token (the page, and `PUT /v1/users/{id}` with
 * `Authorization: Token <reset token>`): hashed before the transaction; the token is spent, unsent reset
 * mail is dropped, every earlier access token stops working, and the change is audited as the user's own.
 */
export async function resetPasswordWithToken(
  ctx: ServiceContext,
  token: string,
  password: string,
  expectUserId?: string,
): Promise<UserRow> {
  const lookup = await lookUpResetToken(ctx, token)
  if (lookup?.state !== 'live') throw resetTokenRefused(lookup?.state === 'expired')
  const { user, tokenHash } = lookup
  if (expectUserId !== undefined && expectUserId.toLowerCase() !== user.id) throw resetTokenRefused(false)
  const passwordHash = await hashPassword(password)
  const now = ctx.clock.now()
  const updated = await ctx.db.transaction().execute(async (tx) => {
    const row = await setPasswordWithResetToken(tx, user.id, tokenHash, passwordHash, now)
    if (row === 'stale') throw preconditionFailed()
    if (!row) throw resetTokenRefused(false)
    await deleteQueuedPasswordResetMail(tx, user.id)
    await recordAudit(tx, ctx.clock, selfActor(row), {
      action: 'user.password_changed',
      tenantId: null,
      target: { type: 'user', id: user.id },
      changes: {
        password: [user.password_hash === null ? null : MASKED, MASKED],
        resetPasswordExpiryDate: [user.reset_password_expiry_date?.toISOString() ?? null, null],
      },
    })
    return row
  })
  // Credentials changed: cached logins and token standings must be read again.
  ctx.access.invalidate()
  return updated
}

/** The user acting on itself through a one-time link, as the audit trail records it. */
export function selfActor(user: Pick<UserRow, 'id' | 'email' | 'role_id'>): UserActor {
  return {
    kind: 'user',
    principalId: user.id,
    userId: user.id,
    email: user.email,
    displayName: user.email,
    platformRoleId: user.role_id,
    platformPermissions: new Set(),
  }
}

export function adminName(actor: Actor): string {
  return actor.kind === 'user' ? actor.displayName : 'An administrator'
}

async function rephrase(check: () => Promise<void>, message: string): Promise<void> {
  try {
    await check()
  } catch (error) {
    if (error instanceof AppError && error.reason === 'rate_limited') {
      throw new AppError('rate_limited', `${message}; try again later`, undefined, error.headers)
    }
    throw error
  }
}
