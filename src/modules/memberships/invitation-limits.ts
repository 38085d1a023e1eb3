import type { Clock } from '../../clock.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { type CountedLimit, type CounterStore, FailureLimiter } from '../../http/rate-limit.js'

/**
 * The invitation rate limits (docs/api.md#conventions), one set per application, counted in the app's counter store
 * (shared through a server database, docs/operations.md#rate-limit-counters-across-processes) and timed by the injected clock:
 * - invitation e-mails per invitee (by normalized e-mail address, which names one user): at most 5 an
 *   hour, whoever asks — the service cannot be made to flood one mailbox;
 * - failed token look-ups per client address: at most 30 every 15 minutes — tokens are 256 random bits,
 *   so this only stops a client from hammering the look-up.
 */
export const INVITATION_MAILS_PER_HOUR = 5
export const FAILED_LOOKUPS_PER_WINDOW = 30
const LOOKUP_WINDOW_MS = 15 * 60_000

export interface InvitationLimits {
  /**
   * Counts an invitation e-mail to the invitee (its normalized e-mail), or 429 when it has had its share
   * this hour — counted before the mail is queued, in one step (no race between check and count).
   */
  takeMail(email: string): Promise<void>
  /**
   * The same limit for a write that counts it (outbox/write-unit.ts): in the invitation's own statement
   * when the counters are in the database, else before it; the same 429.
   */
  mailLimit(email: string): CountedLimit
  /** Counts e-mails already queued (a bulk load's batch), refusing none. */
  recordMail(email: string): Promise<void>
  /** 429 when the address has failed too many look-ups. */
  checkLookup(address: string): Promise<void>
  recordFailedLookup(address: string): Promise<void>
}

/** The two limiters of one application, timed by its clock; buildApp puts them on the context. */
export function createInvitationLimiters(
  clock: Clock,
  counters: CounterStore,
): ServiceContext['invitationLimiters'] {
  const now = () => clock.now().getTime()
  return {
    mails: new FailureLimiter(INVITATION_MAILS_PER_HOUR, 3_600_000, now, counters, 'invitation-mail'),
    lookups: new FailureLimiter(
      FAILED_LOOKUPS_PER_WINDOW,
      LOOKUP_WINDOW_MS,
      now,
      counters,
      'invitation-lookup',
    ),
  }
}

/** The invitation limits of the application, over its limiters, with messages that say which limit. */
export function invitationLimits(ctx: ServiceContext): InvitationLimits {
  const { mails, lookups } = ctx.invitationLimiters
  return {
    takeMail: (email) => rephrase(() => mails.take(email), MAIL_LIMIT_MESSAGE),
    mailLimit: (email) => {
      const limit = mails.counted(email)
      return {
        inStatement: () => limit.inStatement(),
        take: () => rephrase(() => limit.take(), MAIL_LIMIT_MESSAGE),
        refuse: (window) => rephraseNow(() => limit.refuse(window), MAIL_LIMIT_MESSAGE),
      }
    },
    recordMail: async (email) => {
      await mails.fail(email)
    },
    checkLookup: (address) =>
      rephrase(
        () => lookups.check(address),
        'Too many invalid invitation links from this address; try again later',
      ),
    recordFailedLookup: async (address) => {
      await lookups.fail(address)
    },
  }
}

const MAIL_LIMIT_MESSAGE = `At most ${INVITATION_MAILS_PER_HOUR} invitation e-mails an hour may be sent to one user; try again later`

/** The limiter's 429 with a message that says which limit was hit; Retry-After is kept. */
async function rephrase(check: () => Promise<void>, message: string): Promise<void> {
  try {
    await check()
  } catch (error) {
    throw rephrased(error, message)
  }
}

function rephraseNow(check: () => void, message: string): void {
  try {
    check()
  } catch (error) {
    throw rephrased(error, message)
  }
}

function rephrased(error: unknown, message: string): unknown {
  return error instanceof AppError && error.reason === 'rate_limited'
    ? new AppError('rate_limited', message, undefined, error.headers)
    : error
}
