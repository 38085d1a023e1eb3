import type { Keys } from '../../../crypto/keys.js'
import { decryptSecret, encryptSecret, type SecretEnvelope } from '../../../crypto/secrets.js'

/**
 * A value the console hands to the browser to carry and bring back unread and unchanged (docs/console.md
 * "Second factors"): a sign-in's second-factor challenge, the action a step-up interrupted, an
 * authenticator app being added. Sealed with the secret key (AES-256-GCM, crypto/secrets.ts) under its
 * purpose and what it is bound to — this browser's value before sign-in, the session after — so a sealed
 * field copied into another browser, another session or another form does not open; and it carries its
 * own expiry. The console keeps no state for it: the browser holds it in a hidden field of the one form
 * that needs it, never in a URL.
 */
type SealKeys = Pick<Keys, 'secretKey' | 'secretKeyId'>

interface Sealed<T> {
  /** Milliseconds since the epoch after which it does not open. */
  until: number
  value: T
}

export function seal<T>(keys: SealKeys, purpose: string, binding: string, value: T, until: Date): string {
  const sealed: Sealed<T> = { until: until.getTime(), value }
  const envelope = encryptSecret(keys, JSON.stringify(sealed), associated(purpose, binding))
  return Buffer.from(JSON.stringify(envelope)).toString('base64url')
}

/** The value sealed for this purpose and binding, while it lasts; undefined for anything else. */
export function unseal<T>(
  keys: SealKeys,
  purpose: string,
  binding: string,
  text: string | undefined,
  now: Date,
): T | undefined {
  if (!text || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined
  try {
    const envelope = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as SecretEnvelope
    const sealed = JSON.parse(decryptSecret(keys, envelope, associated(purpose, binding))) as Sealed<T>
    return typeof sealed.until === 'number' && sealed.until > now.getTime() ? sealed.value : undefined
  } catch {
    return undefined
  }
}

function associated(purpose: string, binding: string): string {
  return `console-sealed\n${purpose}\n${binding}`
}
