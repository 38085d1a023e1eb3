import { hash, timingSafeEqual } from 'node:crypto'
import { errors, jwtVerify, SignJWT } from 'jose'
import { secureRandomBytes } from './random.js'

/**
 * Access tokens are HS256 JWTs signed with the token secret; they are verified without a database round
 * trip. One-time secrets (invitation tokens, API key secrets) are 256 random bits, shown once and stored
 * only as their SHA-256 — enough for values with that much entropy, and cheap to look up.
 */
export type TokenSubject = 'user' | 'api_key'

export interface TokenClaims {
  sub: string
  typ: TokenSubject
  /** Issue time in milliseconds: a password change in the same second still invalidates the token. */
  iatMs: number
  exp: number
  /** Set on a token born of a tenant's single sign-on: which tenant's SSO, through which provider. */
  sso?: SsoOrigin
}

/** The tenant whose identity provider proved the user's identity (API.md §12). */
export interface SsoOrigin {
  tenantId: string
  providerId: string
}

export class TokenSigner {
  readonly #key: Uint8Array
  constructor(secret: Uint8Array) {
    this.#key = secret
  }

  async sign(
    subject: string,
    typ: TokenSubject,
    issuedAt: Date,
    ttlSeconds: number,
    sso?: SsoOrigin,
  ): Promise<string> {
    const iat = Math.floor(issuedAt.getTime() / 1000)
    const claims = sso
      ? { typ, iatMs: issuedAt.getTime(), sso: sso.tenantId, idp: sso.providerId }
      : { typ, iatMs: issuedAt.getTime() }
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttlSeconds)
      .sign(this.#key)
  }

  /** The claims of a valid token, or undefined for a forged, malformed or expired one. */
  async verify(token: string, now: Date): Promise<TokenClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: ['HS256'],
        currentDate: now,
      })
      const { sub, typ, iatMs, exp, sso, idp } = payload as Partial<Omit<TokenClaims, 'sso'>> & {
        sso?: unknown
        idp?: unknown
      }
      if (typeof sub !== 'string' || (typ !== 'user' && typ !== 'api_key')) return undefined
      if (typeof iatMs !== 'number' || typeof exp !== 'number') return undefined
      if (sso === undefined && idp === undefined) return { sub, typ, iatMs, exp }
      if (typeof sso !== 'string' || typeof idp !== 'string') return undefined
      return { sub, typ, iatMs, exp, sso: { tenantId: sso, providerId: idp } }
    } catch (error) {
      if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined
      throw error
    }
  }
}

export function looksLikeJwt(value: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value)
}

/** A fresh one-time secret, URL-safe. */
export function randomSecret(): string {
  return secureRandomBytes(32).toString('base64url')
}

export function sha256(value: string): string {
  return hash('sha256', value, 'base64url')
}

export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
