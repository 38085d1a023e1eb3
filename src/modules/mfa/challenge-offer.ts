import type { ServiceContext } from '../../context.js'
import { AppError, type MfaChallengeBody } from '../../errors.js'
import { WWW_AUTHENTICATE } from '../auth/unauthorized.js'
import { createChallenge } from './challenges.js'
import type { ChallengePurpose } from './challenges.repository.js'
import { answerKinds } from './mfa.repository.js'

/**
 * The second factor asked for (docs/security.md, "Signing in with a second factor", "Step-up"): a new
 * challenge and what the account can answer it with — `totp` with an authenticator app, `webauthn` with a
 * passkey (and the request options, once WebAuthn is wired), `recovery` while codes remain.
 */

export type FactorKind = MfaChallengeBody['factors'][number]

const KIND_ORDER: readonly FactorKind[] = ['totp', 'webauthn', 'recovery']

/** The kinds of answer the account has, in a stable order. */
export async function factorKinds(ctx: ServiceContext, userId: string): Promise<FactorKind[]> {
  const kinds = new Set(await answerKinds(ctx.db, userId))
  return KIND_ORDER.filter((kind) => kinds.has(kind))
}

/** Whether the kinds hold a factor (recovery codes are a fallback, not one). */
export function holdsFactor(kinds: readonly FactorKind[]): boolean {
  return kinds.includes('totp') || kinds.includes('webauthn')
}

export interface OfferOptions {
  purpose: Extract<ChallengePurpose, 'sign_in' | 'step_up'>
  sessionId?: string | undefined
  tokenTtl?: number | undefined
}

/** A new challenge bound to the account and purpose, as the error body carries it. */
export async function offerChallenge(
  ctx: ServiceContext,
  userId: string,
  options: OfferOptions,
  /** The account's kinds when already read. */
  known?: FactorKind[],
): Promise<MfaChallengeBody> {
  const factors = known ?? (await factorKinds(ctx, userId))
  const passkeys = factors.includes('webauthn') ? ctx.secondFactors.webauthn : undefined
  const request = await passkeys?.requestOptions(userId)
  const issued = await createChallenge(ctx.db, ctx.clock, {
    purpose: options.purpose,
    userId,
    sessionId: options.sessionId ?? null,
    tokenTtl: options.tokenTtl ?? null,
    webauthnChallenge: request?.challenge ?? null,
  })
  return { token: issued.token, factors, ...(request ? { webauthn: request.options } : {}) }
}

/** 401 mfa_required: the password was right; now the second factor, through POST /v1/tokens/mfa. */
export function mfaRequired(
  challenge: MfaChallengeBody,
  message = 'This account has a second factor: answer the challenge at POST /v1/tokens/mfa',
  attribute?: Record<string, string>,
): AppError {
  return new AppError(
    'mfa_required',
    message,
    attribute,
    { 'www-authenticate': WWW_AUTHENTICATE },
    { mfa: challenge },
  )
}

/** 401 reauthentication_required: a second factor at most ten minutes old, through POST /v1/tokens/step-up. */
export function reauthenticationRequired(
  challenge: MfaChallengeBody,
  message = 'This needs a second factor from the last 10 minutes: answer the challenge at POST /v1/tokens/step-up',
  attribute?: Record<string, string>,
): AppError {
  return new AppError('reauthentication_required', message, attribute, undefined, { mfa: challenge })
}
