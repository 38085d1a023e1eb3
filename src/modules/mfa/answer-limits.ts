import { TtlCache } from '../../access/cache.js'
import type { Clock } from '../../clock.js'
import type { SecondFactorState } from '../../context.js'
import { type CounterStore, FailureLimiter } from '../../http/rate-limit.js'

/**
 * Wrong second factors per account (docs/security.md, "Signing in with a second factor"): beyond the five
 * a challenge survives, an account takes 10 wrong answers in 15 minutes — whatever the challenges, the
 * processes (the counters are the database's on a server) or the path (sign-in, step-up) — then 429 with
 * Retry-After until the window ends. Brute force of six-digit codes gets 10 guesses in 10^6 per quarter hour.
 */
export const ACCOUNT_WRONG_ANSWERS = { limit: 10, windowMs: 15 * 60_000 } as const

/** A person's Basic refusal is decided from a cache this short (another process's change shows within it). */
const HAS_FACTOR_TTL_MS = 5_000

/** The second factors' state of one application; `webauthn` is wired by buildApp once implemented. */
export function createSecondFactorState(clock: Clock, counters: CounterStore): SecondFactorState {
  const now = () => clock.now().getTime()
  return {
    failures: new FailureLimiter(
      ACCOUNT_WRONG_ANSWERS.limit,
      ACCOUNT_WRONG_ANSWERS.windowMs,
      now,
      counters,
      'mfa-account',
    ),
    hasFactor: new TtlCache(HAS_FACTOR_TTL_MS, 10_000, now),
    webauthn: undefined,
  }
}
