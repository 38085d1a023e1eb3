/**
 * A small time-bounded cache. Entries live `ttlMs`; `clear()` drops everything at once. Used for the
 * per-request look-ups of authentication and permissions: the TTL bounds how stale another process
 * can be, and in-process writes clear it at once.
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { value: V; expires: number }>()
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.#entries.get(key)
    if (!entry) return undefined
    if (entry.expires <= this.now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry.value
  }

  set(key: K, value: V): void {
    if (this.#entries.size >= this.maxEntries) {
      // Drop the oldest insertion: Map iterates in insertion order.
      const oldest = this.#entries.keys().next()
      if (!oldest.done) this.#entries.delete(oldest.value)
    }
    this.#entries.set(key, { value, expires: this.now() + this.ttlMs })
  }

  async getOrLoad(key: K, load: () => Promise<V>): Promise<V> {
    const cached = this.get(key)
    if (cached !== undefined) return cached
    const value = await load()
    this.set(key, value)
    return value
  }

  delete(key: K): void {
    this.#entries.delete(key)
  }

  clear(): void {
    this.#entries.clear()
  }
}
