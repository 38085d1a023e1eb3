import { getRandomValues } from 'node:crypto'

/**
 * New user ids for bulk loads: UUIDv7 (RFC 9562) by the method of the `uuidv7` generator the single
 * create uses — a 48-bit millisecond timestamp, then a 42-bit counter that starts at a random value each
 * millisecond and counts up within it (so ids of one process sort in creation order), then 32 random
 * bits — but without its per-id costs: the library asks the system for 32 random bytes every 8 numbers
 * and builds a Uint8Array and a UUID object per id, then its text one character at a time, which at
 * 100,000 ids a second was a tenth of the load's CPU. Here random numbers come 4 KiB at a time and the
 * 36 characters are written into one reused buffer and read out as one flat string.
 */
const RANDOM_WORDS = 1024
const random = new Uint32Array(RANDOM_WORDS)
let randomCursor = RANDOM_WORDS

function nextUint32(): number {
  if (randomCursor >= RANDOM_WORDS) {
    getRandomValues(random)
    randomCursor = 0
  }
  return random[randomCursor++]!
}

const MAX_COUNTER = 2 ** 42 - 1
/** A clock that goes back further than this starts a new sequence rather than keep the old time. */
const ROLLBACK_ALLOWANCE_MS = 10_000

let lastMs = 0
let counter = 0

function resetCounter(): void {
  counter = nextUint32() * 0x400 + (nextUint32() & 0x3ff)
}

// Two ASCII hex digits per byte value, and where each of the 16 bytes goes in the 36-character text.
const HEX_DIGITS = Buffer.from(
  Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0')).join(''),
  'latin1',
)
const text = Buffer.alloc(36, '-')

function put(position: number, byte: number): void {
  text[position] = HEX_DIGITS[byte * 2]!
  text[position + 1] = HEX_DIGITS[byte * 2 + 1]!
}

/** A fresh UUIDv7 in its canonical lower-case text form. */
export function newUserId(now: number = Date.now()): string {
  if (now > lastMs || now + ROLLBACK_ALLOWANCE_MS < lastMs) {
    lastMs = now
    resetCounter()
  } else {
    counter += 1
    if (counter > MAX_COUNTER) {
      lastMs += 1
      resetCounter()
    }
  }
  const ms = lastMs
  const high = Math.trunc(ms / 0x10000)
  const low = ms & 0xffff
  const randA = Math.trunc(counter / 2 ** 30)
  const randBHigh = counter & (2 ** 30 - 1)
  const randBLow = nextUint32()
  put(0, (high >>> 24) & 0xff)
  put(2, (high >>> 16) & 0xff)
  put(4, (high >>> 8) & 0xff)
  put(6, high & 0xff)
  put(9, low >>> 8)
  put(11, low & 0xff)
  put(14, 0x70 | (randA >>> 8))
  put(16, randA & 0xff)
  put(19, 0x80 | (randBHigh >>> 24))
  put(21, (randBHigh >>> 16) & 0xff)
  put(24, (randBHigh >>> 8) & 0xff)
  put(26, randBHigh & 0xff)
  put(28, randBLow >>> 24)
  put(30, (randBLow >>> 16) & 0xff)
  put(32, (randBLow >>> 8) & 0xff)
  put(34, randBLow & 0xff)
  return text.toString('latin1', 0, 36)
}
