import { Secret, TOTP } from 'otpauth'
import { toString as qrCode } from 'qrcode'
import { secureRandomBytes } from '../../crypto/random.js'

/**
 * TOTP as RFC 6238 and every authenticator app have it (docs/security.md, "Second factors"): SHA-1, six
 * digits, 30-second steps, a 20-byte key in base32. A code is valid for its step and one either side (a
 * phone's clock a little off); which step it matched is what the factor store takes once.
 */
const ISSUER = 'Tenantry'
const PERIOD_S = 30
const WINDOW = 1

function totpOf(key: string, account = ''): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label: account,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_S,
    secret: Secret.fromBase32(key),
  })
}

/** A new key: 20 random bytes (160 bits, RFC 4226's recommendation), base32 as apps take it typed in. */
export function newTotpKey(): string {
  // A copy of its own: a small Buffer may be a view into a shared pool.
  return new Secret({ buffer: Uint8Array.from(secureRandomBytes(20)).buffer }).base32
}

/** The enrolment's `otpauth://totp/…` URI and its QR code (SVG) for an app to scan. */
export async function totpEnrolment(key: string, account: string): Promise<{ uri: string; qrSvg: string }> {
  const uri = totpOf(key, account).toString()
  return { uri, qrSvg: await qrCode(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }) }
}

/**
 * The time step a code matches at `nowMs` within one step either side, or undefined. Six digits only
 * (spaces a person types between groups are dropped).
 */
export function matchingStep(key: string, code: string, nowMs: number): number | undefined {
  const token = code.replace(/\s/g, '')
  if (!/^\d{6}$/.test(token)) return undefined
  const delta = totpOf(key).validate({ token, timestamp: nowMs, window: WINDOW })
  return delta === null ? undefined : Math.floor(nowMs / 1000 / PERIOD_S) + delta
}
