import { hash, verify } from '@node-rs/argon2'

/**
 * Passwords are hashed with argon2id (the library's default algorithm; docs/architecture.md#library-pitfalls: its `Algorithm` enum is
 * a const enum that vanishes under tsx, so it is not named). A hash is slow on purpose: always call these
 * outside a database transaction.
 */
const OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 }

export const PASSWORD_MIN_LENGTH = 8
export const PASSWORD_MAX_LENGTH = 256

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS)
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password)
  } catch {
    return false
  }
}

// A real hash of a random password: verifying against it costs what a real check costs, so a missing
// user cannot be told from a wrong password by timing.
let decoy: Promise<string> | undefined
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(crypto.randomUUID())
  return decoy
}
