/**
 * The in-process nudge: a write that queued mail calls `nudgeOutbox(db)` after its commit, and a worker
 * of the same process on the same database wakes at once instead of at its next poll. Keyed by the
 * database object so that two applications in one process (tests) do not wake each other. Workers in
 * other processes rely on their poll interval.
 */
type Listener = () => void

const listeners = new WeakMap<object, Set<Listener>>()

export function nudgeOutbox(db: object): void {
  for (const listener of listeners.get(db) ?? []) listener()
}

/** Calls `listener` on every nudge for `db`; returns the unsubscribe function. */
export function onOutboxNudge(db: object, listener: Listener): () => void {
  let set = listeners.get(db)
  if (!set) {
    set = new Set()
    listeners.set(db, set)
  }
  set.add(listener)
  return () => set.delete(listener)
}
