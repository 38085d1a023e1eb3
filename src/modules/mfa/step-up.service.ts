import type { Actor, UserActor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import type { SessionGrant } from '../../crypto/tokens.js'
import type { AuthMethod } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import type { SessionTokens } from '../auth/session-tokens.js'
import { unauthorized } from '../auth/unauthorized.js'
import { checkAccountNotLocked, checkAnswer, countWrongAnswer } from './answers.service.js'
import { offerChallenge, reauthenticationRequired } from './challenge-offer.js'
import { openChallenge, spendChallenge } from './challenges.js'
import type { ChallengeRow } from './challenges.repository.js'
import type { FactorAnswer } from './factor-answers.js'
import { liveSessionExpiry } from './mfa.repository.js'

/**
 * `POST /v1/tokens/step-up` (docs/security.md, "Step-up"): a second factor with the current token → a
 * fresh token of the same session, expiring when it does, whose `auth_time` is now and whose `amr` gains
 * the factor. Wrong answers count against the account as a sign-in's do.
 */

const WRONG = 'wrong, or already used'

export interface StepUpRequest extends FactorAnswer {
  /** The challenge of the `reauthentication_required` answered: needed for a passkey's assertion. */
  mfaToken?: string | undefined
}

function stepper(actor: Actor): UserActor & { sessionId: string } {
  if (actor.kind !== 'user')
    throw new AppError('permission_denied', 'An API key has no second factor to step up with')
  if (!actor.sessionId)
    throw new AppError(
      'permission_denied',
      'Step-up renews the token of a session: Basic has none, sign in at POST /v1/tokens',
    )
  return actor as UserActor & { sessionId: string }
}

export async function stepUp(
  ctx: ServiceContext,
  sessions: SessionTokens,
  actor: Actor,
  request: StepUpRequest,
): Promise<{ token: string; ttl: number }> {
  const me = stepper(actor)
  const challenge = await stepUpChallenge(ctx, me, request)
  await checkAccountNotLocked(ctx, me.userId)
  const right = await checkAnswer(ctx, me.userId, request, challenge?.webauthn_challenge ?? null)
  if (!right) {
    await countWrongAnswer(ctx, me.userId, challenge)
    const field =
      request.code !== undefined ? 'code' : request.recoveryCode !== undefined ? 'recoveryCode' : 'webauthn'
    const again = await offerChallenge(ctx, me.userId, { purpose: 'step_up', sessionId: me.sessionId })
    throw reauthenticationRequired(again, `The second factor is ${WRONG}`, { [field]: WRONG })
  }
  if (challenge && !(await spendChallenge(ctx.db, ctx.clock, challenge.id)))
    throw await challengeGone(ctx, me)
  const now = ctx.clock.now()
  const expiresAt = await liveSessionExpiry(ctx.db, me.userId, me.sessionId, now)
  if (!expiresAt) throw unauthorized('This session has ended: sign in again')
  const methods: AuthMethod[] = [...new Set([...(me.authMethods ?? []), right.method])]
  const grant: SessionGrant = { sessionId: me.sessionId, authMethods: methods, authTime: now }
  if (me.sso) grant.sso = me.sso
  const token = await sessions.token(me.userId, grant, expiresAt)
  return { token, ttl: Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000)) }
}

/** The challenge named by `mfaToken`, the caller's own and live; none without one (codes need none). */
async function stepUpChallenge(
  ctx: ServiceContext,
  me: UserActor & { sessionId: string },
  request: StepUpRequest,
): Promise<ChallengeRow | undefined> {
  if (request.mfaToken === undefined) {
    if (request.webauthn !== undefined) {
      throw new AppError(
        'validation_failed',
        'A passkey answers the challenge it was asked with: send its mfaToken',
        {
          mfaToken: 'required with webauthn',
        },
      )
    }
    return undefined
  }
  const challenge = await openChallenge(ctx.db, ctx.clock, request.mfaToken, 'step_up')
  // Another person's challenge is as good as none: a challenge is bound to its account.
  if (!challenge || challenge.user_id !== me.userId) throw await challengeGone(ctx, me)
  return challenge
}

async function challengeGone(ctx: ServiceContext, me: UserActor & { sessionId: string }): Promise<AppError> {
  const again = await offerChallenge(ctx, me.userId, { purpose: 'step_up', sessionId: me.sessionId })
  return reauthenticationRequired(
    again,
    'This challenge is unknown, expired, used or not yours: answer the new one',
    {
      mfaToken: 'unknown, expired, used or not yours',
    },
  )
}
