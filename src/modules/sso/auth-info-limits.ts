import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { FailureLimiter } from '../../http/rate-limit.js'

/**
 * The limits of `GET /v1/auth-info/{email|tenantId}` (docs/operations.md, Limits): an answer tells anyone
 * whether an address belongs to a tenant, and which, so look-ups are counted like the other things that
 * can be tried without credentials — per e-mail address looked up, and per client address — in the app's
 * counter store (shared by every process on a server database). A tenant id counts only per client
 * address: a tenant's own login page asks for it once for every person who signs in there.
 *
 * Every look-up counts, known address or not (a count only of unknown ones would tell which are known).
 * The defaults sit far above what a person does: the console asks twice a sign-in.
 */
export const AUTH_INFO_WINDOW_MS = 15 * 60_000

export interface AuthInfoLimits {
  /** Counts a look-up of `key` from `address`; 429 with Retry-After past either limit. */
  take(key: string, address: string): Promise<void>
}

const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The limits of one application (a limit of 0 is off), timed by its clock. */
export function createAuthInfoLimits(ctx: ServiceContext): AuthInfoLimits {
  const now = () => ctx.clock.now().getTime()
  const { authInfoLimitPerEmail, authInfoLimitPerAddress } = ctx.config
  const limiter = (limit: number, name: string) =>
    limit > 0 ? new FailureLimiter(limit, AUTH_INFO_WINDOW_MS, now, ctx.counters, name) : undefined
  const byAddress = limiter(authInfoLimitPerAddress, 'auth-info-address')
  const byEmail = limiter(authInfoLimitPerEmail, 'auth-info-email')
  return {
    async take(key, address) {
      if (byAddress) {
        await rephrase(() => byAddress.take(address), 'Too many sign-in look-ups from this address')
      }
      if (byEmail && !TENANT_ID.test(key)) {
        const email = key.trim().toLowerCase()
        await rephrase(() => byEmail.take(email), 'Too many sign-in look-ups for this e-mail address')
      }
    },
  }
}

/** The limiter's 429 with a message that says which limit, keeping its Retry-After. */
async function rephrase(take: () => Promise<void>, message: string): Promise<void> {
  try {
    await take()
  } catch (error) {
    if (error instanceof AppError && error.reason === 'rate_limited') {
      throw new AppError('rate_limited', `${message}; try again later`, undefined, error.headers)
    }
    throw error
  }
}
