import { getRandomValues } from 'node:crypto'

/**
 * New ids of every row the service creates (newId): UUIDv7 (RFC 9562) by the method of the `uuidv7`
 * package's generator — a 48-bit millisecond timestamp, then a 42-bit counter that starts at a random value each
 * millisecond and counts up within it (so ids of one process sort in creation order), then 32 random
 * bits — but without its per-id costs: the library asks the system for 32 random bytes every 8 numbers
 * and builds a Uint8Array and a UUID object per id, then its text one character at a time, a visible
 * share of a bulk load's CPU (docs/performance.md). Here random numbers come 4 KiB at a time and the
 * 36 characters are written into one reused buffer and read out as one flat string.
 */
const RANDOM_WORDS = 1024
const MAX_COUNTER = 2 ** 42 - 1
/** A clock that goes back further than this starts a new sequence rather than keep the old time. */
const ROLLBACK_ALLOWANCE_MS = 10_000

// Two ASCII hex digits per byte value.
const HEX_DIGITS = Buffer.from(
  Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0')).join(''),
  'latin1',
)

export class Uuid7Generator {
  readonly #random = new Uint32Array(RANDOM_WORDS)
  #randomCursor = RANDOM_WORDS
  #lastMs = 0
  #counter = 0
  /** The 36-character text, written in place; where each of the 16 bytes goes is fixed. */
  readonly #text = Buffer.alloc(36, '-')

  /** A fresh UUIDv7 in its canonical lower-case text form. */
  next(now: number = Date.now()): string {
    if (now > this.#lastMs || now + ROLLBACK_ALLOWANCE_MS < this.#lastMs) {
      this.#lastMs = now
      this.#resetCounter()
    } else {
      this.#counter += 1
      if (this.#counter > MAX_COUNTER) {
        this.#lastMs += 1
        this.#resetCounter()
      }
    }
    const ms = this.#lastMs
    const counter = this.#counter
    const high = Math.trunc(ms / 0x10000)
    const low = ms & 0xffff
    const randA = Math.trunc(counter / 2 ** 30)
    const randBHigh = counter & (2 ** 30 - 1)
    const randBLow = this.#nextUint32()
    this.#put(0, (high >>> 24) & 0xff)
    this.#put(2, (high >>> 16) & 0xff)
    this.#put(4, (high >>> 8) & 0xff)
    this.#put(6, high & 0xff)
    this.#put(9, low >>> 8)
    this.#put(11, low & 0xff)
    this.#put(14, 0x70 | (randA >>> 8))
    this.#put(16, randA & 0xff)
    this.#put(19, 0x80 | (randBHigh >>> 24))
    this.#put(21, (randBHigh >>> 16) & 0xff)
    this.#put(24, (randBHigh >>> 8) & 0xff)
    this.#put(26, randBHigh & 0xff)
    this.#put(28, randBLow >>> 24)
    this.#put(30, (randBLow >>> 16) & 0xff)
    this.#put(32, (randBLow >>> 8) & 0xff)
    this.#put(34, randBLow & 0xff)
    return this.#text.toString('latin1', 0, 36)
  }

  #nextUint32(): number {
    if (this.#randomCursor >= RANDOM_WORDS) {
      getRandomValues(this.#random)
      this.#randomCursor = 0
    }
    return this.#random[this.#randomCursor++]!
  }

  #resetCounter(): void {
    this.#counter = this.#nextUint32() * 0x400 + (this.#nextUint32() & 0x3ff)
  }

  #put(position: number, byte: number): void {
    this.#text[position] = HEX_DIGITS[byte * 2]!
    this.#text[position + 1] = HEX_DIGITS[byte * 2 + 1]!
  }
}

/** The process's generator: its ids sort in creation order across every table and request. */
const processIds = new Uuid7Generator()

/** A new UUIDv7 for a row this process creates. */
export function newId(): string {
  return processIds.next()
}
