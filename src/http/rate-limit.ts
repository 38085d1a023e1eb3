import { hash } from 'node:crypto'
import type { Piece } from '../db/statement-pieces.js'
import { AppError } from '../errors.js'
import { rateLimited } from './metrics.js'

/** A fixed window of one counter: how many hits, and when (epoch ms) the window ends. */
export interface CounterWindow {
  count: number
  resetAt: number
}

/**
 * Where rate-limit and lock-out counters live (docs/operations.md#rate-limit-counters-across-processes). With a server database every process shares
 * them through a table (counter-store.ts), so N processes do not give an attacker N budgets; with the
 * embedded database — one process by construction (its folder is locked) — they stay in memory.
 */
export interface CounterStore {
  /** Adds one to `key` atomically, starting a new window of `windowMs` when the last one has ended. */
  hit(key: string, windowMs: number, nowMs: number): Promise<CounterWindow>
  /** The current window of `key`, if one is running. */
  peek(key: string, nowMs: number): Promise<CounterWindow | undefined>
  /**
   * hit() as a statement returning one row (count, reset_at), for a change that counts in its own
   * statement (a data-modifying WITH) and so pays no round trip for it; only a database store has it.
   */
  hitStatement?(key: string, windowMs: number, nowMs: number): CounterStatement
}

/** hit() as SQL returning one CounterRow: the upsert, its text and parameters from one template. */
export type CounterStatement = Piece

/** What hitStatement returns. */
export interface CounterRow {
  count: number
  reset_at: Date
}

/** A counter row as the limiters see it. */
export function counterWindow(row: CounterRow): CounterWindow {
  return { count: row.count, resetAt: new Date(row.reset_at).getTime() }
}

/**
 * A limiter's count taken inside the statement of the change it limits: `statement` is the counting
 * upsert, and the change is written only while the count it returns is at most `limit`.
 */
export interface CountInStatement extends CounterStatement {
  limit: number
}

/**
 * One key's limit as a write counts it (the write unit, outbox/write-unit.ts): inside the write's own
 * statement when the counters are the database's, so the count costs no round trip; otherwise before the
 * write, in one atomic step.
 */
export interface CountedLimit {
  /** The counting upsert for the write's statement; undefined when the counters are not the database's. */
  inStatement(): CountInStatement | undefined
  /** Counts now and refuses (429) past the limit. */
  take(): Promise<void>
  /** The 429 for a count that the write's statement took past the limit. */
  refuse(window: CounterWindow): void
}

export class MemoryCounterStore implements CounterStore {
  readonly #windows = new Map<string, CounterWindow>()

  async hit(key: string, windowMs: number, nowMs: number): Promise<CounterWindow> {
    const window = this.#windows.get(key)
    if (window && window.resetAt > nowMs) {
      window.count += 1
      return { ...window }
    }
    if (this.#windows.size > 100_000) {
      for (const [k, w] of this.#windows) if (w.resetAt <= nowMs) this.#windows.delete(k)
    }
    const fresh = { count: 1, resetAt: nowMs + windowMs }
    this.#windows.set(key, fresh)
    return { ...fresh }
  }

  async peek(key: string, nowMs: number): Promise<CounterWindow | undefined> {
    const window = this.#windows.get(key)
    return window && window.resetAt > nowMs ? { ...window } : undefined
  }
}

/** Stored keys are hashes: the counters table holds no e-mail addresses or client addresses. */
function storedKey(name: string, key: string): string {
  return hash('sha256', `${name}\u0000${key}`, 'base64url')
}

/** The 429 of limiter `name`, with Retry-After until its window ends; counted in the metrics. */
function refusal(name: string, message: string, resetAt: number, now: number): AppError {
  rateLimited.inc({ limit: name })
  return new AppError('rate_limited', message, undefined, {
    'retry-after': String(Math.max(1, Math.ceil((resetAt - now) / 1000))),
  })
}

/**
 * Fixed-window failure counters for what an attacker can do without credentials: failed logins per
 * username and per address, token look-ups, invitation e-mails per invitee. Hand-written because the
 * limits count failures under our own keys (a username), which route-level plugins do not model.
 * `name` keeps one limiter's keys apart from another's in a shared store. Both calls are async (the
 * store may be the database): always `await` them.
 */
export class FailureLimiter {
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly store: CounterStore = new MemoryCounterStore(),
    private readonly name = 'failures',
  ) {}

  /** Throws 429 when `key` has already failed `limit` times in the current window. */
  async check(key: string): Promise<void> {
    const now = this.now()
    const window = await this.store.peek(storedKey(this.name, key), now)
    if (window && window.count >= this.limit) {
      throw refusal(this.name, 'Too many failed attempts; try again later', window.resetAt, now)
    }
  }

  /**
   * Counts an attempt and throws 429 when it is past the limit: one atomic step, so concurrent attempts
   * from any number of processes cannot all pass a check made before any of them is counted. A refused
   * attempt counts too (it only moves the count further past the limit, within the same window).
   */
  async take(key: string): Promise<void> {
    this.refuseBeyondLimit(await this.store.hit(storedKey(this.name, key), this.windowMs, this.now()))
  }

  /**
   * take() for a change of one statement: the counting upsert to put in that statement, when the store
   * is the database (undefined otherwise: call take()). Judge the count it returned with refuseBeyondLimit.
   */
  takeInStatement(key: string): CountInStatement | undefined {
    const statement = this.store.hitStatement?.(storedKey(this.name, key), this.windowMs, this.now())
    return statement && { ...statement, limit: this.limit }
  }

  /** The limit of `key` for a write that counts it (CountedLimit). */
  counted(key: string): CountedLimit {
    return {
      inStatement: () => this.takeInStatement(key),
      take: () => this.take(key),
      refuse: (window) => this.refuseBeyondLimit(window),
    }
  }

  /** 429 when a counted attempt is past the limit. */
  refuseBeyondLimit(window: CounterWindow): void {
    if (window.count <= this.limit) return
    throw refusal(this.name, 'Too many attempts; try again later', window.resetAt, this.now())
  }

  /** Counts a failure; true when this one reached the limit (the key is locked out from now on). */
  async fail(key: string): Promise<boolean> {
    const window = await this.store.hit(storedKey(this.name, key), this.windowMs, this.now())
    return window.count === this.limit
  }
}

/**
 * Requests per credential per minute, for operators who set TENANTRY_API_RATE_LIMIT (off by default:
 * authenticated traffic is not throttled unless asked, docs/api.md#conventions). Counted and checked in one atomic
 * step, so concurrent requests cannot all slip under the limit.
 */
export class RequestLimiter {
  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly store: CounterStore = new MemoryCounterStore(),
    private readonly name = 'requests',
  ) {}

  async take(key: string): Promise<void> {
    const now = this.now()
    const window = await this.store.hit(storedKey(this.name, key), 60_000, now)
    if (window.count > this.perMinute) {
      throw refusal(
        this.name,
        `More than ${this.perMinute} requests a minute for this credential`,
        window.resetAt,
        now,
      )
    }
  }
}
