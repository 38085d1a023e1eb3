import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { SessionGrant, SsoOrigin, TokenSigner, UserTokenClaims } from '../../crypto/tokens.js'
import { newId } from '../../crypto/uuid7.js'
import type { AuthMethod, Database } from '../../db/schema.js'
import { SessionActivity } from './session-activity.js'
import { SessionRevocations } from './session-revocations.js'
import { insertSession, type RevokedSession } from './session-store.repository.js'

/** Where a sign-in came from, as the person's list of sessions shows it. */
export interface SignInClient {
  ip: string | null
  userAgent: string | null
}

/** One sign-in: who, how (`amr`), from where; for a password, the hash that was checked. */
export interface SignIn {
  userId: string
  authMethods: readonly AuthMethod[]
  /** The tenant whose identity provider vouched for the person, when `authMethods` holds `sso`. */
  sso?: SsoOrigin
  /** A password sign-in's checked hash: the session is written only while it is still the user's. */
  passwordHash?: string
  /**
   * A sign-in finished later (a second factor answered after the password): the session is written only
   * while the password has not changed since this moment (the challenge's issue).
   */
  passwordUnchangedSince?: Date
  client: SignInClient
}

/** A user agent is kept to this many characters: enough to tell a browser, bounded for the list. */
const USER_AGENT_MAX = 512

/**
 * Sessions as authentication sees them (docs/security.md, "Sessions"): a sign-in becomes a session row and
 * its first token; a token is accepted while its session is live. The one way a user token is made —
 * password sign-in and the single sign-on hand-over call `start`, and step-up or refresh will call
 * `token` for a session that exists — so every user token names its session and says how it was won.
 */
export class SessionTokens {
  readonly revocations: SessionRevocations
  readonly activity: SessionActivity

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly signer: TokenSigner,
    onError: (error: unknown) => void,
  ) {
    this.revocations = new SessionRevocations(db, clock, onError)
    this.activity = new SessionActivity(db, clock, onError)
  }

  /**
   * A new session lasting `ttlSeconds`, and its first token; undefined when the person may no longer
   * sign in (disabled, erased, or the password checked has just been changed).
   */
  async start(signIn: SignIn, ttlSeconds: number): Promise<{ token: string; sessionId: string } | undefined> {
    const now = this.clock.now()
    const session = {
      id: newId(),
      userId: signIn.userId,
      created: now,
      expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
      ip: signIn.client.ip,
      userAgent: signIn.client.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
      authMethods: signIn.authMethods,
    }
    if (!(await insertSession(this.db, session, signIn.passwordHash, signIn.passwordUnchangedSince)))
      return undefined
    this.activity.started(session.id, now)
    const grant: SessionGrant = { sessionId: session.id, authMethods: signIn.authMethods, authTime: now }
    if (signIn.sso) grant.sso = signIn.sso
    return { token: await this.token(signIn.userId, grant, session.expiresAt), sessionId: session.id }
  }

  /** A token of an existing session, expiring at `expiresAt` (at most the session's own expiry). */
  async token(userId: string, grant: SessionGrant, expiresAt: Date): Promise<string> {
    return this.signer.signUser(userId, grant, this.clock.now(), expiresAt)
  }

  /**
   * Whether a token's session is still live, from this process's revocations; a use of the session.
   * A promise only when the revocations must be read first (at most once a second): the usual check is
   * synchronous, a few map look-ups on the request's path.
   */
  live(claims: UserTokenClaims): boolean | Promise<boolean> {
    const now = this.clock.now().getTime()
    const revoked = this.revocations.revokedNow(claims.sessionId, now)
    if (revoked === undefined) {
      return this.revocations.isRevoked(claims.sessionId).then((late) => this.#used(claims, !late, now))
    }
    return this.#used(claims, !revoked, now)
  }

  #used(claims: UserTokenClaims, live: boolean, now: number): boolean {
    if (live) this.activity.seen(claims.sessionId, now)
    return live
  }

  /** Sessions this process has just revoked: refused here at once, elsewhere within a second. */
  ended(revoked: readonly RevokedSession[]): void {
    this.revocations.add(revoked)
  }
}
