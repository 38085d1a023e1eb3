import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Database } from '../../db/schema.js'
import { type RevokedSession, revokedSince } from './session-store.repository.js'

/** How old this process's knowledge of revocations may be when it accepts a token (docs/security.md). */
export const REVOCATION_MAX_AGE_MS = 1_000
/** Past this age a token check starts the next read without waiting for it: under load none waits. */
const READ_AHEAD_AFTER_MS = 500
/**
 * How long before its commit a revocation may have been stamped and still be found: each read asks for
 * the revocations stamped since the previous read's database time less this, as a transaction stamps
 * `revoked_at` when its statement runs, not when it commits.
 */
const COMMIT_MARGIN_MS = 60_000

/**
 * The sessions revoked whose tokens have not expired yet, as this process knows them — so that a token
 * is checked without a database round trip (docs/security.md, "How fast a revocation takes effect").
 *
 * The set is read again whenever it is older than a second when a token is checked: that check waits for
 * the read, so no process accepts a token of a session revoked more than a second before (plus the read's
 * own time). Past half a second a check starts the read and goes on, so a busy process reads about twice
 * a second and no request waits; an idle one reads on its next request. A read asks only for what was
 * revoked since the last one (an index range, usually empty). The read that waits fails closed: with the
 * database unreachable, tokens are refused with the database's error rather than accepted unchecked.
 * Revocations made by this process are added at once (`add`); `markStale()` — called when this process
 * changed a password or a person's status, which end sessions in the database — makes the next check read.
 */
export class SessionRevocations {
  /** Session id → when its tokens expire (epoch ms); past that the entry is dropped. */
  readonly #revoked = new Map<string, number>()
  /** App-clock time at which the read behind the current set began; −∞ when none, or made stale. */
  #freshAsOf = Number.NEGATIVE_INFINITY
  /** The database's time of the last read: the next asks for revocations since then (less the margin). */
  #databaseTime: Date | undefined
  /** Moved on by markStale: a read begun before that cannot make the set fresh. */
  #generation = 0
  #reading: { generation: number; done: Promise<void> } | undefined

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Whether the session is revoked, when the set is fresh enough to say (starting the next read past
   * half a second); undefined when it is not: then `isRevoked`, which waits for the read. Synchronous, so
   * that the check of nearly every request costs a map look-up and nothing more.
   */
  revokedNow(sessionId: string, now: number): boolean | undefined {
    const age = now - this.#freshAsOf
    if (age >= REVOCATION_MAX_AGE_MS || age < 0) return undefined
    if (age >= READ_AHEAD_AFTER_MS) this.#read().catch(this.onError)
    return this.#revoked.has(sessionId)
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    const known = this.revokedNow(sessionId, this.clock.now().getTime())
    if (known !== undefined) return known
    await this.#read()
    return this.#revoked.has(sessionId)
  }

  add(revoked: readonly RevokedSession[]): void {
    for (const [id, expiresAtMs] of revoked) this.#revoked.set(id, expiresAtMs)
  }

  markStale(): void {
    this.#generation += 1
    this.#freshAsOf = Number.NEGATIVE_INFINITY
  }

  /** Joins the read under way when it began after the last markStale; otherwise queues a new one. */
  #read(): Promise<void> {
    const before = this.#reading
    if (before && before.generation === this.#generation) return before.done
    const generation = this.#generation
    const done = (async () => {
      // One read at a time: each moves #databaseTime on from the one before.
      await before?.done.catch(() => {})
      const started = this.clock.now().getTime()
      const since = this.#databaseTime && new Date(this.#databaseTime.getTime() - COMMIT_MARGIN_MS)
      const { databaseNow, revoked } = await revokedSince(this.db, since, new Date(started))
      this.add(revoked)
      for (const [id, expiresAtMs] of this.#revoked) if (expiresAtMs <= started) this.#revoked.delete(id)
      this.#databaseTime = databaseNow
      if (generation === this.#generation) this.#freshAsOf = started
    })()
    const reading = { generation, done }
    this.#reading = reading
    void done
      .finally(() => {
        if (this.#reading === reading) this.#reading = undefined
      })
      .catch(() => {})
    return done
  }
}
