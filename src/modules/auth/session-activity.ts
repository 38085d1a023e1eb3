import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Database } from '../../db/schema.js'
import { writeLastSeen } from './session-store.repository.js'

/** A session's `last_seen` is written at most this often by one process (docs/security.md). */
export const LAST_SEEN_EVERY_MS = 60_000
/** How many notes `started` lets pile up, at least, before it drops the stale ones. */
const NOTED_PRUNE_AT = 10_000

/**
 * When each session was last used, written off the request's path: a token's use notes its session here
 * and the request goes on; the note is written with every other pending one in one statement, which the
 * request does not wait for. A session is noted at most once a minute per process, so a busy session costs
 * one write a minute, not one a request (docs/performance.md keeps reads free of writes).
 */
export class SessionActivity {
  /** Session id → when this process last queued its `last_seen` (app clock, ms). */
  readonly #noted = new Map<string, number>()
  #pending = new Map<string, Date>()
  /** The size at which `started` prunes next: doubles with what a prune keeps, so bursts stay linear. */
  #pruneAt = NOTED_PRUNE_AT
  #writing: Promise<void> | undefined

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** A session this process has just written: its `last_seen` is already now. */
  started(sessionId: string, at: Date): void {
    // Sign-ins whose tokens are never used write nothing, and so would never reach #write's pruning.
    if (this.#noted.size >= this.#pruneAt) this.#forgetOld(at.getTime())
    this.#noted.set(sessionId, at.getTime())
  }

  /** A token of the session was used at `now` (app clock, ms). */
  seen(sessionId: string, now: number): void {
    const last = this.#noted.get(sessionId)
    if (last !== undefined && now - last < LAST_SEEN_EVERY_MS) return
    this.#noted.set(sessionId, now)
    this.#pending.set(sessionId, new Date(now))
    this.#writing ??= this.#write()
  }

  /** Resolves when what was noted so far is written (a read of the sessions waits for it; so does close). */
  async settled(): Promise<void> {
    await this.#writing
  }

  async #write(): Promise<void> {
    try {
      while (this.#pending.size > 0) {
        const batch = this.#pending
        this.#pending = new Map()
        await writeLastSeen(this.db, batch).catch(this.onError)
      }
      this.#forgetOld(this.clock.now().getTime())
    } finally {
      this.#writing = undefined
    }
  }

  /**
   * Notes older than the interval would not hold a write back: dropping them bounds the map by the
   * sessions used or started in the last minute.
   */
  #forgetOld(now: number): void {
    for (const [id, at] of this.#noted) if (now - at >= LAST_SEEN_EVERY_MS) this.#noted.delete(id)
    this.#pruneAt = Math.max(NOTED_PRUNE_AT, this.#noted.size * 2)
  }
}
