/**
 * Group commit for one kind of write: requests that arrive while the database is busy with earlier ones
 * are written together, in one statement that holds one copy of the write per request, instead of one
 * statement each. On the two cores this service is sized for, a statement's fixed cost — the round trip,
 * its wake-ups on both sides, its commit and WAL flush — is most of a small write's cost
 * (docs/performance.md, "Writes written together"), and the statements of a batch share it.
 *
 * - A write goes out at once while fewer than `maxInFlight` statements of this kind are running, so an
 *   unhurried request waits for nothing; under load, the writes that queued meanwhile go together.
 * - Only writes of the same shape (`shapeOf`) share a statement, and no two that `conflictKey` says
 *   would touch the same rows share one or run at once (the later waits for the earlier's statement to
 *   end), so a batch fails only where one of its writes would fail alone.
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

/**
 * The batching of the service's writes: at most 16 writes in one statement — past that a batch's share
 * of the fixed cost is small, while its text (one copy per write, prepared per connection) keeps growing —
 * and at most 2 statements of one kind at once: the writes that arrive meanwhile wait for the next
 * statement, so under load batches are fuller and cheaper per write than with more at once
 * (docs/performance.md, "Writes written together"), and each kind leaves most of the pool
 * (10 connections by default) to the other requests.
 */
export const BATCHING = { maxBatch: 16, maxInFlight: 2 } as const

interface Waiting<Item, Result> {
  item: Item
  resolve(result: Result): void
  reject(error: unknown): void
}

export class StatementBatcher<Item, Result> {
  readonly #queues = new Map<string, Waiting<Item, Result>[]>()
  #inFlight = 0
  /** The conflict keys of the writes in running statements. */
  readonly #runningKeys = new Set<string>()

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
      const started = this.#startOne()
      if (!started) return
    }
  }

  /** Starts the next statement: from the shape that waited longest and has a write free to go. */
  #startOne(): boolean {
    for (const [shape, queue] of this.#queues) {
      const batch = this.#take(queue)
      if (batch.length === 0) continue
      // A shape with writes left over goes to the back.
      this.#queues.delete(shape)
      if (queue.length > 0) this.#queues.set(shape, queue)
      const keys = batch.map((waiting) => this.options.conflictKey(waiting.item))
      for (const key of keys) this.#runningKeys.add(key)
      this.#inFlight += 1
      void this.#runBatch(batch).finally(() => {
        this.#inFlight -= 1
        for (const key of keys) this.#runningKeys.delete(key)
        this.#flush()
      })
      return true
    }
    return false
  }

  /**
   * Up to maxBatch waiting writes, oldest first, no two with one conflict key and none whose key is in a
   * running statement: it would wait for that statement's row locks anyway, and were it to win the race,
   * the other statement — perhaps a batch of many — would fail and run again write by write.
   */
  #take(queue: Waiting<Item, Result>[]): Waiting<Item, Result>[] {
    const batch: Waiting<Item, Result>[] = []
    const keys = new Set<string>()
    for (let i = 0; i < queue.length && batch.length < this.options.maxBatch; ) {
      const waiting = queue[i] as Waiting<Item, Result>
      const key = this.options.conflictKey(waiting.item)
      if (keys.has(key) || this.#runningKeys.has(key)) {
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

/**
 * The name of a CTE of copy `k` in a statement that holds one copy of a write per request: the first
 * copy's keep their plain names (`change`), the others are numbered by place (`change_1` …).
 */
export function copyName(name: string, k: number): string {
  return `${name}${copySuffix(k)}`
}

export function copySuffix(k: number): string {
  return k === 0 ? '' : `_${k}`
}
