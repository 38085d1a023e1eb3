import { randomBytes, randomFillSync } from 'node:crypto'

/**
 * Random bytes from the system's CSPRNG (OpenSSL's, seeded by the kernel), drawn 4 KiB at a time. A
 * `randomBytes(32)` is one trip into OpenSSL for a few bytes, most of its cost fixed, and an invitation
 * makes two such values (its token and the nonce that encrypts it); from the pool a value costs a copy
 * (figures: docs/performance.md). The same technique as the `uuid` package's and Node's own randomUUID
 * cache. Every byte is handed out once: each value is a copy, and the pool is refilled before any byte
 * is reused.
 */
const POOL_SIZE = 4096
const pool = Buffer.allocUnsafe(POOL_SIZE)
let cursor = POOL_SIZE

export function secureRandomBytes(size: number): Buffer {
  if (size > POOL_SIZE / 4) return randomBytes(size)
  if (cursor + size > POOL_SIZE) {
    randomFillSync(pool)
    cursor = 0
  }
  const value = Buffer.from(pool.subarray(cursor, cursor + size))
  cursor += size
  return value
}
