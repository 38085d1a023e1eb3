/**
 * Group commit for one kind of write: requests that arrive while the database is busy with earlier ones
 * are written together, in one statement that holds one copy of the write per request, instead of one
 * statement each. On the two cores this service is sized for, a statement's fixed cost — the round trip,
 * its wake-ups on both sides, its commit and WAL flush — is most of a small write's cost
 * (docs/performance.md, "Invitations written together"), and the statements of a batch share it.
 *
 * - A write goes out at once while fewer than `maxInFlight` statements of this kind are running, so an
 *   unhurried request waits for nothing; under load, the writes that queued meanwhile go together.
 * - Only writes of the same shape (`shapeOf`) share a statement, and no two that `conflictKey` says
 *   would touch the same rows (they wait for the next statement), so a batch fails only where one of its
 *   writes would fail alone.
 * - One statement is one transaction: when a batch fails, each of its writes runs again on its own, so
 *   every request gets its own answer — its own error — and a failed write takes no other with it.
 */
export interface BatcherOptions<Item> {
  /** Writes with different shapes never share a statement. */
  shapeOf(item: Item): string
  /** Writes with the same key never share a statement. */
  conflictKey(item: Item): string
  maxBatch: number
  maxInFlight: number
  /** Told the size of every statement that ran (a metric). */
  onBatch?: (size: number) => void
}

interface Waiting<Item, Result> {
  item: Item
  resolve(result: Result): void
  reject(error: unknown): void
}

export class StatementBatcher<Item, Result> {
  readonly #queues = new Map<string, Waiting<Item, Result>[]>()
  #inFlight = 0

  /** `write(items)` answers one result per item, in their order, from one statement. */
  constructor(
    private readonly write: (items: readonly Item[]) => Promise<Result[]>,
    private readonly options: BatcherOptions<Item>,
  ) {}

  run(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const shape = this.options.shapeOf(item)
      let queue = this.#queues.get(shape)
      if (!queue) {
        queue = []
        this.#queues.set(shape, queue)
      }
      queue.push({ item, resolve, reject })
      this.#flush()
    })
  }

  #flush(): void {
    while (this.#inFlight < this.options.maxInFlight) {
      // The shape that waited longest goes first; one with writes left over goes to the back.
      const next = this.#queues.entries().next()
      if (next.done) return
      const [shape, queue] = next.value
      const batch = this.#take(queue)
      this.#queues.delete(shape)
      if (queue.length > 0) this.#queues.set(shape, queue)
      this.#inFlight += 1
      void this.#runBatch(batch).finally(() => {
        this.#inFlight -= 1
        this.#flush()
      })
    }
  }

  /** Up to maxBatch waiting writes, oldest first, no two with one conflict key. */
  #take(queue: Waiting<Item, Result>[]): Waiting<Item, Result>[] {
    const batch: Waiting<Item, Result>[] = []
    const keys = new Set<string>()
    for (let i = 0; i < queue.length && batch.length < this.options.maxBatch; ) {
      const waiting = queue[i] as Waiting<Item, Result>
      const key = this.options.conflictKey(waiting.item)
      if (keys.has(key)) {
        i += 1
        continue
      }
      keys.add(key)
      batch.push(waiting)
      queue.splice(i, 1)
    }
    return batch
  }

  async #runBatch(batch: Waiting<Item, Result>[]): Promise<void> {
    this.options.onBatch?.(batch.length)
    try {
      const results = await this.write(batch.map((waiting) => waiting.item))
      for (const [i, waiting] of batch.entries()) waiting.resolve(results[i] as Result)
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error)
        return
      }
      // Some write of the batch failed, and with it the batch: each again on its own, for its own answer.
      for (const waiting of batch) await this.#runBatch([waiting])
    }
  }
}

/**
 * An app's batchers by kind of write, each made by its module the first time it is needed: the context
 * holds them (state passes in) without its layer knowing the modules' types.
 */
export class StatementBatchers {
  readonly #byKind = new Map<string, unknown>()

  for<Item, Result>(
    kind: string,
    create: () => StatementBatcher<Item, Result>,
  ): StatementBatcher<Item, Result> {
    let batcher = this.#byKind.get(kind) as StatementBatcher<Item, Result> | undefined
    if (!batcher) {
      batcher = create()
      this.#byKind.set(kind, batcher)
    }
    return batcher
  }
}
