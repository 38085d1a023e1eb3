import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { offerChallenge, reauthenticationRequired } from './challenge-offer.js'
import { hasActiveFactor } from './factors.repository.js'

/**
 * Step-up (docs/security.md, "Step-up"): the sensitive operations — creating API keys and SCIM keys,
 * creating or changing identity providers, erasure, removing a factor, new recovery codes, adding a
 * factor when one exists, the second-factor policy and platform security, resetting someone's factors —
 * need a second factor at most ten minutes old. A stolen session, or a token left open on a desk, cannot
 * do them with the password it was won with.
 */

/** How old a second factor may be for a step-up operation. */
export const STEP_UP_MAX_AGE_S = 10 * 60

/** The amr values of a second factor. */
const SECOND_FACTORS = new Set(['otp', 'rec', 'hwk', 'swk'])

/** Whether the actor's token was won, or stepped up, with a second factor at most ten minutes ago. */
export function hasRecentSecondFactor(actor: Actor, nowMs: number): boolean {
  if (actor.kind !== 'user' || actor.authTime === undefined) return false
  const factor = (actor.authMethods ?? []).some((method) => SECOND_FACTORS.has(method))
  return factor && nowMs / 1000 - actor.authTime <= STEP_UP_MAX_AGE_S
}

/**
 * The guard of a step-up operation: returns when the caller may go on, else throws 401
 * `reauthentication_required` carrying a `step_up` challenge for the caller's session (answer it at
 * POST /v1/tokens/step-up, then repeat the request with the fresh token). API keys are not people and are
 * never asked; a person without an active factor has nothing to step up with and is not asked either. A
 * token with no second factor counts as old.
 */
export async function requireRecentSecondFactor(ctx: ServiceContext, actor: Actor): Promise<void> {
  if (actor.kind !== 'user') return
  if (hasRecentSecondFactor(actor, ctx.clock.now().getTime())) return
  if (!(await hasActiveFactor(ctx.db, actor.userId))) return
  const challenge = await offerChallenge(ctx, actor.userId, {
    purpose: 'step_up',
    sessionId: actor.sessionId,
  })
  throw reauthenticationRequired(challenge)
}
