import type { ServiceContext } from '../../context.js'
import { decryptSecret, isSecretEnvelope } from '../../crypto/secrets.js'
import { recordAudit } from '../audit/audit.repository.js'
import { failChallenge } from './challenges.js'
import type { ChallengeRow } from './challenges.repository.js'
import { type FactorAnswer, noPasskey, oneAnswer, type SecondFactorMethod } from './factor-answers.js'
import { listActiveTotpSecrets, takeTotpStep } from './factors.repository.js'
import { normalizeRecoveryCode, recoveryCodeHash, recoveryCodeKey } from './recovery-codes.js'
import { recoveryCodeSummary, spendRecoveryCode } from './recovery-codes.repository.js'
import { matchingStep } from './totp.js'

/**
 * Checking a second factor (docs/security.md, "Signing in with a second factor"): a TOTP code against
 * the person's authenticator apps (each step taken once), a recovery code (each spent once), a WebAuthn
 * assertion through the wired implementation. A wrong answer counts against the challenge (five) and the
 * account (ten in fifteen minutes, whatever the challenge).
 */

export interface RightAnswer {
  method: SecondFactorMethod
  factorId?: string
  /** For a recovery code: how many are left after it. */
  recoveryCodesLeft?: number
}

/** The associated data a TOTP key is sealed with: its factor, so a key copied to another row is nothing. */
export function totpSealing(factorId: string): string {
  return `user_factors:${factorId}:totp_secret`
}

/** A right answer for the person, or undefined for a wrong one (the caller counts it: wrongAnswer). */
export async function checkAnswer(
  ctx: ServiceContext,
  userId: string,
  answer: FactorAnswer,
  webauthnChallenge: string | null,
): Promise<RightAnswer | undefined> {
  switch (oneAnswer(answer)) {
    case 'code':
      return checkTotp(ctx, userId, answer.code ?? '')
    case 'recoveryCode':
      return checkRecoveryCode(ctx, userId, answer.recoveryCode ?? '')
    case 'webauthn': {
      const webauthn = ctx.secondFactors.webauthn
      if (!webauthn || !webauthnChallenge) throw noPasskey()
      const verified = await webauthn.verify(userId, answer.webauthn ?? {}, webauthnChallenge)
      return verified && { method: verified.amr, factorId: verified.factorId }
    }
  }
}

async function checkTotp(
  ctx: ServiceContext,
  userId: string,
  code: string,
): Promise<RightAnswer | undefined> {
  const now = ctx.clock.now()
  for (const factor of await listActiveTotpSecrets(ctx.db, userId)) {
    if (!isSecretEnvelope(factor.secret)) continue
    const step = matchingStep(
      decryptSecret(ctx.keys, factor.secret, totpSealing(factor.id)),
      code,
      now.getTime(),
    )
    // The step is taken in one conditional UPDATE: a replay, even racing the first use, is refused here.
    if (step !== undefined && (await takeTotpStep(ctx.db, factor.id, step, now)))
      return { method: 'otp', factorId: factor.id }
  }
  return undefined
}

async function checkRecoveryCode(
  ctx: ServiceContext,
  userId: string,
  typed: string,
): Promise<RightAnswer | undefined> {
  const code = normalizeRecoveryCode(typed)
  if (!code) return undefined
  const hash = recoveryCodeHash(recoveryCodeKey(ctx.keys), userId, code)
  if (!(await spendRecoveryCode(ctx.db, userId, hash, ctx.clock.now()))) return undefined
  const left = (await recoveryCodeSummary(ctx.db, userId))?.remaining ?? 0
  await recordAudit(
    ctx.db,
    ctx.clock,
    { kind: 'system' },
    {
      action: 'mfa.recovery_code_used',
      tenantId: null,
      target: { type: 'user', id: userId },
      changes: { recoveryCodesRemaining: [left + 1, left] },
    },
  )
  return { method: 'rec', recoveryCodesLeft: left }
}

/** 429 while the account has had ten wrong answers in the window (before any answer is checked). */
export async function checkAccountNotLocked(ctx: ServiceContext, userId: string): Promise<void> {
  await ctx.secondFactors.failures.check(userId)
}

/**
 * Counts a wrong answer against the challenge and the account; the tenth in the account's window writes
 * `mfa.challenge_failed` (docs/webhooks.md). Whether the challenge is now dead.
 */
export async function countWrongAnswer(
  ctx: ServiceContext,
  userId: string,
  challenge: Pick<ChallengeRow, 'id'> | undefined,
): Promise<boolean> {
  const dead = challenge ? await failChallenge(ctx.db, challenge.id) : false
  if (await ctx.secondFactors.failures.fail(userId)) {
    await recordAudit(
      ctx.db,
      ctx.clock,
      { kind: 'system' },
      {
        action: 'mfa.challenge_failed',
        tenantId: null,
        target: { type: 'user', id: userId },
        changes: {},
      },
    )
  }
  return dead
}
