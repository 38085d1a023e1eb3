import { AppError } from '../errors.js'

/**
 * Fixed-window counters in memory, for what an attacker can do without credentials: failed logins per
 * username and per address, token look-ups. Hand-written because the limits count failures under our
 * own keys (a username), which route-level rate-limit plugins do not model. One process's counters;
 * docs/scaling.md says where they move for many processes.
 */
export class FailureLimiter {
  readonly #windows = new Map<string, { count: number; resetAt: number }>()
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws 429 when `key` has already failed `limit` times in the current window. */
  check(key: string): void {
    const window = this.#windows.get(key)
    const now = this.now()
    if (!window || window.resetAt <= now) return
    if (window.count >= this.limit) {
      const retryAfter = Math.max(1, Math.ceil((window.resetAt - now) / 1000))
      throw new AppError('rate_limited', 'Too many failed attempts; try again later', undefined, {
        'retry-after': String(retryAfter),
      })
    }
  }

  /** Counts a failure; true when this one reached the limit (the key is locked out from now on). */
  fail(key: string): boolean {
    const now = this.now()
    const window = this.#windows.get(key)
    if (!window || window.resetAt <= now) {
      if (this.#windows.size > 100_000) this.#sweep(now)
      this.#windows.set(key, { count: 1, resetAt: now + this.windowMs })
      return this.limit <= 1
    }
    window.count += 1
    return window.count === this.limit
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key)
  }
}

/**
 * Requests per credential per minute, for operators who set TENANTRY_API_RATE_LIMIT (off by default:
 * authenticated traffic is not throttled unless asked, API.md §1).
 */
export class RequestLimiter {
  readonly #windows = new Map<string, { count: number; resetAt: number }>()
  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(key: string): void {
    const now = this.now()
    let window = this.#windows.get(key)
    if (!window || window.resetAt <= now) {
      if (this.#windows.size > 100_000) {
        for (const [k, w] of this.#windows) if (w.resetAt <= now) this.#windows.delete(k)
      }
      window = { count: 0, resetAt: now + 60_000 }
      this.#windows.set(key, window)
    }
    window.count += 1
    if (window.count > this.perMinute) {
      throw new AppError(
        'rate_limited',
        `More than ${this.perMinute} requests a minute for this credential`,
        undefined,
        {
          'retry-after': String(Math.max(1, Math.ceil((window.resetAt - now) / 1000))),
        },
      )
    }
  }
}
