/**
 * The in-process nudge: a write that queued mail calls `ctx.outboxSignal.nudge()` after its commit, and a
 * worker given the same signal (one per application, on its context) wakes at once instead of at its next
 * poll. Two applications in one process (tests) have two signals and do not wake each other; workers in
 * other processes rely on their poll interval.
 */
type Listener = () => void

export class OutboxSignal {
  readonly #listeners = new Set<Listener>()

  nudge(): void {
    for (const listener of this.#listeners) listener()
  }

  /** Calls `listener` on every nudge; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}
