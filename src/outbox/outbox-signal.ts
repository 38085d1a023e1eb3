import type { LeasedRow, NewOutboxRow } from './outbox.repository.js'

/**
 * How a write hands its outbox rows to the worker of its own process — the write unit does it for the
 * services (write-unit.ts). One signal per application, on its context; two applications in one process
 * — tests — have two and do not wake each other:
 * - before writing, `lease(now)`: when a worker runs here and has room, the time the row is leased to it
 *   until; the writer stores the row with that lease (NewOutboxRow.lease), so it is written claimed and
 *   no claim statement is needed for it;
 * - after the commit, `handOver(rows)`: the worker wakes at once and sends the leased rows, reading them
 *   by primary key; rows without a lease (a bulk load's, or none could be leased) are found by its scan
 *   of due rows, which the hand-over wakes too.
 * Workers in other processes find rows by their poll; a leased row is theirs once its lease runs out
 * (the process that wrote it died before sending it).
 */
export interface OutboxTaker {
  /** The lease a row written now would hold, or undefined when this worker takes no more rows. */
  lease(now: Date): Date | undefined
  /** Rows committed with their lease (none: only wake up and scan). */
  take(rows: readonly LeasedRow[]): void
}

export class OutboxSignal {
  #taker: OutboxTaker | undefined

  /** See OutboxTaker.lease; undefined when no worker runs in this process. */
  lease(now: Date): Date | undefined {
    return this.#taker?.lease(now)
  }

  /** After the commit that wrote `rows`: wakes the worker, handing it the leased ones. */
  handOver(rows: readonly NewOutboxRow[] = []): void {
    const leased: LeasedRow[] = []
    for (const row of rows) if (row.lease) leased.push({ id: row.id, lease: row.lease })
    this.#taker?.take(leased)
  }

  /**
   * Attaches a worker of this application; returns the detach function. Rows are handed to one worker:
   * while one is attached, another (two started on one context) is not, and finds rows by its scan.
   */
  attach(taker: OutboxTaker): () => void {
    if (this.#taker) return () => {}
    this.#taker = taker
    return () => {
      if (this.#taker === taker) this.#taker = undefined
    }
  }
}
