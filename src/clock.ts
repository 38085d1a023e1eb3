/** The wall clock, passed in so that tests can move time (the 24-hour invitation expiry). */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock that stands still until told to move; for tests. */
export class ManualClock implements Clock {
  #now: number
  constructor(start: Date | number = Date.now()) {
    this.#now = typeof start === 'number' ? start : start.getTime()
  }
  now(): Date {
    return new Date(this.#now)
  }
  advance(ms: number): void {
    this.#now += ms
  }
  set(at: Date): void {
    this.#now = at.getTime()
  }
}
