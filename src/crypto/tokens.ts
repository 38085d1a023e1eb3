import { hash, timingSafeEqual } from 'node:crypto'
import { errors, jwtVerify, SignJWT } from 'jose'
import { AUTH_METHODS, type AuthMethod } from '../db/schema.js'
import { secureRandomBytes } from './random.js'

/**
 * Access tokens are HS256 JWTs signed with the token secret; they are verified without a database round
 * trip. One-time secrets (invitation tokens, API key secrets) are 256 random bits, shown once and stored
 * only as their SHA-256 — enough for values with that much entropy, and cheap to look up.
 */
export type TokenSubject = 'user' | 'api_key'

/**
 * A user's token: the session it belongs to (`sid`), how and when that sign-in was won (`amr`,
 * `auth_time`), and — for a tenant's single sign-on, whose `amr` holds `sso` — which tenant's provider
 * (docs/security.md, "Sessions"; docs/api.md, "Authentication").
 */
export interface UserTokenClaims {
  typ: 'user'
  sub: string
  exp: number
  sessionId: string
  authMethods: readonly AuthMethod[]
  /** When the person proved who they are, in seconds since the epoch (`auth_time`). */
  authTime: number
  sso?: SsoOrigin
}

/** An API key's token: the key and the expiry; no session (a key is not a person). */
export interface ApiKeyTokenClaims {
  typ: 'api_key'
  sub: string
  exp: number
}

export type TokenClaims = UserTokenClaims | ApiKeyTokenClaims

/**
 * The tenant whose identity provider proved the user's identity (docs/sso.md); `mfa` when the provider
 * asserted more than one factor (an OIDC `amr`, a SAML AuthnContextClassRef: docs/security.md "Policy"),
 * signed into the token as `idp_mfa`.
 */
export interface SsoOrigin {
  tenantId: string
  providerId: string
  mfa?: true
}

/** What a user token says of its session: signed into it, read back from it. */
export interface SessionGrant {
  sessionId: string
  authMethods: readonly AuthMethod[]
  authTime: Date
  sso?: SsoOrigin
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const isAuthMethod = (value: unknown): value is AuthMethod =>
  (AUTH_METHODS as readonly unknown[]).includes(value)

export class TokenSigner {
  readonly #key: Uint8Array
  constructor(secret: Uint8Array) {
    this.#key = secret
  }

  /** A user's token for one session; it expires at `expiresAt` (never after the session does). */
  async signUser(userId: string, grant: SessionGrant, issuedAt: Date, expiresAt: Date): Promise<string> {
    const claims = {
      typ: 'user',
      sid: grant.sessionId,
      amr: grant.authMethods,
      auth_time: Math.floor(grant.authTime.getTime() / 1000),
      ...(grant.sso ? { sso: grant.sso.tenantId, idp: grant.sso.providerId } : {}),
      ...(grant.sso?.mfa ? { idp_mfa: true } : {}),
    }
    return this.#sign(userId, claims, issuedAt, Math.floor(expiresAt.getTime() / 1000))
  }

  /** An API key's token (POST /v1/tokens with a key id and secret). */
  async signApiKey(keyId: string, issuedAt: Date, ttlSeconds: number): Promise<string> {
    return this.#sign(keyId, { typ: 'api_key' }, issuedAt, Math.floor(issuedAt.getTime() / 1000) + ttlSeconds)
  }

  async #sign(subject: string, claims: Record<string, unknown>, issuedAt: Date, exp: number) {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subject)
      .setIssuedAt(Math.floor(issuedAt.getTime() / 1000))
      .setExpirationTime(exp)
      .sign(this.#key)
  }

  /**
   * The claims of a valid token, or undefined for a forged, malformed or expired one — and for a user
   * token without a session, issued before sessions existed: every user token belongs to one now.
   */
  async verify(token: string, now: Date): Promise<TokenClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.#key, { algorithms: ['HS256'], currentDate: now })
      const { sub, typ, exp } = payload
      if (typeof sub !== 'string' || typeof exp !== 'number') return undefined
      if (typ === 'api_key') return { typ, sub, exp }
      return typ === 'user' ? userClaims(sub, exp, payload) : undefined
    } catch (error) {
      if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined
      throw error
    }
  }
}

/** A user token's session claims, checked: `sso` in `amr` exactly when the token names the tenant. */
function userClaims(sub: string, exp: number, payload: Record<string, unknown>): UserTokenClaims | undefined {
  const { sid, amr, auth_time: authTime, sso, idp, idp_mfa: idpMfa } = payload
  if (typeof sid !== 'string' || !UUID.test(sid) || typeof authTime !== 'number') return undefined
  if (!Array.isArray(amr) || amr.length === 0 || !amr.every(isAuthMethod)) return undefined
  const claims: UserTokenClaims = { typ: 'user', sub, exp, sessionId: sid, authMethods: amr, authTime }
  if (sso === undefined && idp === undefined) return amr.includes('sso') ? undefined : claims
  if (typeof sso !== 'string' || typeof idp !== 'string' || !amr.includes('sso')) return undefined
  return {
    ...claims,
    sso: { tenantId: sso, providerId: idp, ...(idpMfa === true ? { mfa: true as const } : {}) },
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
