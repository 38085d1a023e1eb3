import { createHmac, hkdfSync } from 'node:crypto'
import type { Keys } from '../../crypto/keys.js'
import { secureRandomBytes } from '../../crypto/random.js'

/**
 * Recovery codes (docs/security.md, "Recovery"): 10 a set, each 10 characters of base32 (50 bits), shown
 * once in two groups of five, accepted with or without spaces or hyphens, in any case.
 *
 * Kept as an HMAC-SHA256 under a key derived from the service's secret key, never as a plain hash: 50
 * bits is little enough that a copy of the table with unkeyed SHA-256 hashes could be searched offline
 * for every code; without the secret key the stored values say nothing. Each code is spent once.
 */
export const RECOVERY_CODES_PER_SET = 10
const CODE_LENGTH = 10
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** The key the codes' hashes are made with: HKDF of the secret key, for this use only. */
export function recoveryCodeKey(keys: Pick<Keys, 'secretKey'>): Buffer {
  return Buffer.from(hkdfSync('sha256', keys.secretKey, Buffer.alloc(0), 'tenantry recovery codes', 32))
}

/** A new set: each code as a person reads it ("ABCDE-FGHIJ"). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES_PER_SET }, () => {
    // 5 bits a character from each byte's low bits: 32 divides 256, so every character is equally likely.
    const chars = [...secureRandomBytes(CODE_LENGTH)].map((byte) => ALPHABET[byte & 31]).join('')
    return `${chars.slice(0, 5)}-${chars.slice(5)}`
  })
}

/** A code as typed → its canonical form (no spaces or hyphens, upper case), or undefined if it cannot be one. */
export function normalizeRecoveryCode(typed: string): string | undefined {
  const code = typed.replace(/[\s-]/g, '').toUpperCase()
  return code.length === CODE_LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : undefined
}

/** The stored form of a canonical code, bound to its person (a code copied to another row is nothing). */
export function recoveryCodeHash(key: Buffer, userId: string, canonicalCode: string): string {
  return createHmac('sha256', key).update(`${userId}\u0000${canonicalCode}`).digest('base64url')
}
