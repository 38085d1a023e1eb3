import { createCipheriv, createDecipheriv } from 'node:crypto'
import type { Keys } from './keys.js'
import { secureRandomBytes } from './random.js'

/**
 * Secrets at rest: AES-256-GCM with a fresh 96-bit nonce per value. The caller's associated data (for an
 * integration: tenant id, integration id and field name) is authenticated but not stored, so a
 * ciphertext copied to another row or field does not decrypt. The key id is stored with each value so
 * that keys can be rotated later (decrypt with the named key, re-encrypt with the current one).
 */
export interface SecretEnvelope {
  v: 1
  /** Id of the key that encrypted it (crypto/keys.ts keyId). */
  kid: string
  iv: string
  ct: string
  tag: string
}

type SecretKeys = Pick<Keys, 'secretKey' | 'secretKeyId'>

export function encryptSecret(keys: SecretKeys, plaintext: string, associatedData: string): SecretEnvelope {
  const iv = secureRandomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keys.secretKey, iv)
  cipher.setAAD(Buffer.from(associatedData, 'utf8'))
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return {
    v: 1,
    kid: keys.secretKeyId,
    iv: iv.toString('base64url'),
    ct: ct.toString('base64url'),
    tag: cipher.getAuthTag().toString('base64url'),
  }
}

export class SecretDecryptionError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SecretDecryptionError'
  }
}

/** The plaintext; throws SecretDecryptionError for another key, tampering or other associated data. */
export function decryptSecret(keys: SecretKeys, envelope: SecretEnvelope, associatedData: string): string {
  if (envelope.v !== 1)
    throw new SecretDecryptionError(`unsupported secret envelope version ${String(envelope.v)}`)
  if (envelope.kid !== keys.secretKeyId) {
    throw new SecretDecryptionError(`secret was encrypted with key ${envelope.kid}, not the current key`)
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', keys.secretKey, Buffer.from(envelope.iv, 'base64url'))
    decipher.setAAD(Buffer.from(associatedData, 'utf8'))
    decipher.setAuthTag(Buffer.from(envelope.tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(envelope.ct, 'base64url')), decipher.final()]).toString(
      'utf8',
    )
  } catch {
    throw new SecretDecryptionError(
      'secret does not decrypt: wrong key, altered value or other associated data',
    )
  }
}

export function isSecretEnvelope(value: unknown): value is SecretEnvelope {
  const v = value as Partial<SecretEnvelope> | null
  return (
    typeof v === 'object' &&
    v !== null &&
    v.v === 1 &&
    typeof v.kid === 'string' &&
    typeof v.iv === 'string' &&
    typeof v.ct === 'string' &&
    typeof v.tag === 'string'
  )
}
