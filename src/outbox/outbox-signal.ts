/**
 * The in-process nudge: a write that queued outbox rows calls `ctx.outboxSignal.nudge(ids)` after its
 * commit, and a worker given the same signal (one per application, on its context) wakes at once instead
 * of at its next poll, and claims those rows by their ids. Two applications in one process (tests) have
 * two signals and do not wake each other; workers in other processes rely on their poll interval.
 */
type Listener = (ids: readonly string[]) => void

export class OutboxSignal {
  readonly #listeners = new Set<Listener>()

  /** `ids`: the rows the commit queued, when the caller knows them (none: the worker scans for them). */
  nudge(ids: readonly string[] = []): void {
    for (const listener of this.#listeners) listener(ids)
  }

  /** Calls `listener` on every nudge; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}
