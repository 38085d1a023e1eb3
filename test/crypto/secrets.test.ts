import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { keyId } from '../../src/crypto/keys.js'
import {
  decryptSecret,
  encryptSecret,
  isSecretEnvelope,
  SecretDecryptionError,
} from '../../src/crypto/secrets.js'

/** AES-256-GCM envelopes (src/crypto/secrets.ts): what every stored integration secret relies on. */
function keysOf(key = randomBytes(32)) {
  return { secretKey: key, secretKeyId: keyId(key) }
}

describe('secret envelopes', () => {
  const keys = keysOf()
  const ad = 'integration:tenant-1:integration-1:password'

  it('round-trips, names its key, and does not contain the plaintext', () => {
    const envelope = encryptSecret(keys, 'hunter2-correct-horse', ad)
    expect(isSecretEnvelope(envelope)).toBe(true)
    expect(envelope.kid).toBe(keys.secretKeyId)
    expect(JSON.stringify(envelope)).not.toContain('hunter2')
    expect(decryptSecret(keys, envelope, ad)).toBe('hunter2-correct-horse')
  })

  it('uses a fresh nonce for every value, so equal secrets do not look equal', () => {
    const a = encryptSecret(keys, 'same', ad)
    const b = encryptSecret(keys, 'same', ad)
    expect(a.iv).not.toBe(b.iv)
    expect(a.ct).not.toBe(b.ct)
  })

  it('refuses other associated data, another key and any altered byte', () => {
    const envelope = encryptSecret(keys, 'value', ad)
    expect(() => decryptSecret(keys, envelope, 'integration:tenant-2:integration-1:password')).toThrow(
      SecretDecryptionError,
    )
    expect(() => decryptSecret(keysOf(), envelope, ad)).toThrow(SecretDecryptionError)
    // Same key id but another key (as after a bad restore): still refused by the tag.
    expect(() => decryptSecret({ ...keysOf(), secretKeyId: keys.secretKeyId }, envelope, ad)).toThrow(
      SecretDecryptionError,
    )
    const ct = Buffer.from(envelope.ct, 'base64url')
    ct[0] = ct[0]! ^ 1
    expect(() => decryptSecret(keys, { ...envelope, ct: ct.toString('base64url') }, ad)).toThrow(
      SecretDecryptionError,
    )
    const tag = Buffer.from(envelope.tag, 'base64url')
    tag[0] = tag[0]! ^ 1
    expect(() => decryptSecret(keys, { ...envelope, tag: tag.toString('base64url') }, ad)).toThrow(
      SecretDecryptionError,
    )
  })

  it('tells envelopes from plain values', () => {
    expect(isSecretEnvelope('')).toBe(false)
    expect(isSecretEnvelope({ v: 2, kid: 'k', iv: 'i', ct: 'c', tag: 't' })).toBe(false)
    expect(isSecretEnvelope(null)).toBe(false)
  })
})
