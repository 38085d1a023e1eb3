import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { type Actor, type ApiKeyActor, userDisplayName } from '../../access/actor.js'
import { TtlCache } from '../../access/cache.js'
import type { AccessControl } from '../../access/effective.js'
import type { Clock } from '../../clock.js'
import { looksLikeJwt, safeEqual, sha256, type TokenClaims, type TokenSigner } from '../../crypto/tokens.js'
import type { Database } from '../../db/schema.js'
import { loginFailures } from '../../http/metrics.js'
import { type CounterStore, FailureLimiter, MemoryCounterStore } from '../../http/rate-limit.js'
import { recordLoginLockout } from './login-lockout.js'
import { PasswordChecks } from './password-checks.js'
import {
  type ApiKeyPrincipal,
  permissionSet,
  toApiKeyActor,
  toUserActor,
  type UserPrincipal,
} from './principals.js'
import { findApiKeyCredentials, findUserCredentials } from './principals.repository.js'
import type { SecondFactorGate } from './second-factor-gate.js'
import { SessionTokens, type SignInClient } from './session-tokens.js'
import { unauthorized } from './unauthorized.js'

/** An `Authorization: Token <value>` whose value is not a JWT: an invitation token (docs/api.md#tenant-users-and-invitations). */
export interface InvitationCredential {
  kind: 'invitation'
  token: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Credentials that checked out: an API key, or a user with the password hash that was verified. */
type Proved = { actor: Actor; passwordHash?: string }

/**
 * Authorization header → Actor (docs/api.md#authentication). Tokens are verified by signature alone; a user token is live
 * while its session is (docs/security.md: revoked, or ended by a password change or the person's disabling
 * or erasure — known to every process within a second, without a round trip per request), and a key's
 * standing (disabled? expired?) and a Basic user's (disabled?) come from a short-lived cache that
 * in-process writes clear, so a request usually costs no database round trip for authentication.
 * Successful Basic password checks are cached by a hash of the credentials for the same reason: argon2
 * is slow by design. A token whose signature checked out is remembered too (its claims never change;
 * expiry is still checked on every use): the HMAC costs a large share of a request's CPU
 * (docs/performance.md, "Figures behind the code").
 */
export class Authenticator {
  readonly #users = new TtlCache<string, UserPrincipal | null>(5_000)
  readonly #keys = new TtlCache<string, ApiKeyPrincipal | null>(5_000)
  readonly #verifiedPasswords = new TtlCache<string, { userId: string; at: number; passwordHash: string }>(
    60_000,
  )
  readonly #verifiedTokens = new TtlCache<string, TokenClaims>(60_000)
  readonly #passwordChecks = new PasswordChecks()
  readonly #failuresByName: FailureLimiter
  readonly #failuresByAddress: FailureLimiter
  /** The sessions behind user tokens: issuing them, and whether one is still live. */
  readonly sessions: SessionTokens
  /** Second factors (modules/mfa), set by app.ts: a password then asks for the account's factor. */
  secondFactors: SecondFactorGate | undefined = undefined

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly signer: TokenSigner,
    access: AccessControl,
    counters: CounterStore = new MemoryCounterStore(),
    logger?: Pick<Logger, 'warn'>,
  ) {
    const now = () => clock.now().getTime()
    this.sessions = new SessionTokens(db, clock, signer, (error) =>
      logger?.warn({ err: error }, 'sessions: a background read or write failed'),
    )
    this.#failuresByName = new FailureLimiter(10, 60_000, now, counters, 'login-username')
    this.#failuresByAddress = new FailureLimiter(100, 60_000, now, counters, 'login-address')
    access.onInvalidate(() => {
      this.#users.clear()
      this.#keys.clear()
      this.#verifiedPasswords.clear()
      // A password or a status changed here may have ended sessions (migration 0017's trigger).
      this.sessions.revocations.markStale()
    })
  }

  /** The actor behind an Authorization header; 401 for anything missing, malformed or wrong. */
  async authenticate(header: string | undefined, address: string): Promise<Actor | InvitationCredential> {
    if (!header) throw unauthorized('Credentials are required')
    const space = header.indexOf(' ')
    const scheme = space < 0 ? header : header.slice(0, space)
    const value = space < 0 ? '' : header.slice(space + 1).trim()
    switch (scheme.toLowerCase()) {
      case 'bearer':
      case 'token':
        if (looksLikeJwt(value)) return this.#fromToken(value)
        if (scheme.toLowerCase() === 'token' && /^[A-Za-z0-9_-]{20,200}$/.test(value)) {
          return { kind: 'invitation', token: value }
        }
        throw unauthorized('Malformed token')
      case 'basic': {
        const decoded = Buffer.from(value, 'base64').toString('utf8')
        const colon = decoded.indexOf(':')
        if (colon < 1) throw unauthorized('Malformed Basic credentials')
        const actor = await this.login(decoded.slice(0, colon), decoded.slice(colon + 1), address)
        // Basic carries no second factor: refused for an account that has one (programs use API keys).
        if (actor.kind === 'user') await this.secondFactors?.checkBasic(actor.userId)
        return actor
      }
      default:
        throw unauthorized('Unsupported authorization scheme')
    }
  }

  /** Username (e-mail or API key id) and password/secret → actor (Basic); failures are rate limited. */
  async login(username: string, password: string, address: string): Promise<Actor> {
    return (await this.#prove(username, password, address)).actor
  }

  /**
   * `POST /v1/tokens`: a key's token, or a new session of the user and its first token (amr `pwd`). A
   * session is written only while the password checked is still the user's and the user may sign in.
   * For an account with a second factor the password only earns the challenge (401 `mfa_required`), or
   * — with `code`, the one-call form — a session won with both.
   */
  async createToken(
    username: string,
    password: string,
    client: SignInClient,
    ttlSeconds: number,
    code?: string,
  ) {
    const { actor, passwordHash } = await this.#prove(username, password, client.ip ?? '')
    if (actor.kind === 'api_key') return this.signer.signApiKey(actor.keyId, this.clock.now(), ttlSeconds)
    const signedIn = await this.secondFactors?.passwordSignIn({
      userId: actor.userId,
      passwordHash,
      client,
      ttlSeconds,
      code,
    })
    if (signedIn) return signedIn
    const signIn = { userId: actor.userId, authMethods: ['pwd'] as const, passwordHash, client }
    const started = await this.sessions.start(signIn, ttlSeconds)
    if (!started) throw unauthorized('Invalid username or password')
    return started.token
  }

  async #prove(username: string, password: string, address: string): Promise<Proved> {
    const name = username.trim().toLowerCase()
    await this.#failuresByName.check(name)
    await this.#failuresByAddress.check(address)
    const proved = UUID.test(name)
      ? await this.#apiKeyLogin(name, password)
      : await this.#passwordLogin(name, password)
    if (!proved) {
      loginFailures.inc({ kind: UUID.test(name) ? 'api_key' : 'password' })
      const [lockedOut] = await Promise.all([
        this.#failuresByName.fail(name),
        this.#failuresByAddress.fail(address),
      ])
      if (lockedOut) await recordLoginLockout(this.db, this.clock, name)
      throw unauthorized('Invalid username or password')
    }
    return proved
  }

  /**
   * The claims of a valid, unexpired token, which say how it was won: `amr` holds `sso` only on a token
   * the single sign-on hand-over issued (POST /v1/tokens takes a password or a key secret). The console's
   * SSO landing page takes no other (docs/console.md). Says nothing of its session or the person's
   * standing: /v1/login does.
   */
  async tokenClaims(token: string): Promise<TokenClaims | undefined> {
    return looksLikeJwt(token) ? this.#verifiedClaims(token) : undefined
  }

  async #fromToken(token: string): Promise<Actor> {
    const claims = await this.#verifiedClaims(token)
    if (!claims) throw unauthorized('Invalid or expired token')
    if (claims.typ === 'api_key') {
      const key = await this.#apiKey(claims.sub)
      if (!this.#usable(key, 'api')) throw unauthorized('This API key is disabled or gone')
      return toApiKeyActor(key)
    }
    // One mechanism for a user token: its session. Disabling, erasing and a password change end the
    // person's sessions in their own transaction (migration 0017), and a session is born only while the
    // person may sign in (session-store.repository.ts insertSession).
    const live = this.sessions.live(claims)
    if (!(typeof live === 'boolean' ? live : await live))
      throw unauthorized('This session has ended: sign in again')
    const user = await this.#user(claims.sub)
    if (!user) throw unauthorized('This user is gone')
    return toUserActor(user, claims)
  }

  /** The claims of a token with a valid signature that has not expired (keyed by the whole token). */
  async #verifiedClaims(token: string): Promise<TokenClaims | undefined> {
    const now = this.clock.now()
    const known = this.#verifiedTokens.get(token)
    if (known) return known.exp > Math.floor(now.getTime() / 1000) ? known : undefined
    const claims = await this.signer.verify(token, now)
    if (claims) this.#verifiedTokens.set(token, claims)
    return claims
  }

  async #passwordLogin(email: string, password: string): Promise<Proved | undefined> {
    const cacheKey = sha256(`${email}\u0000${password}`)
    const verified = this.#verifiedPasswords.get(cacheKey)
    if (verified) {
      const user = await this.#user(verified.userId)
      if (
        user &&
        user.status !== 'disabled' &&
        user.status !== 'erased' &&
        user.passwordChangedAtMs <= verified.at
      )
        return { actor: toUserActor(user), passwordHash: verified.passwordHash }
      this.#verifiedPasswords.delete(cacheKey)
    }
    const row = await findUserCredentials(this.db, { email })
    // Without a user or a password the check runs against a decoy: the answer takes as long.
    if (!(await this.#passwordChecks.verify(row?.password_hash, password)) || !row?.password_hash)
      return undefined
    const user = await this.#user(row.id)
    if (!user || user.status === 'disabled' || user.status === 'erased') return undefined
    const passwordHash = row.password_hash
    this.#verifiedPasswords.set(cacheKey, { userId: row.id, at: this.clock.now().getTime(), passwordHash })
    return { actor: toUserActor(user), passwordHash }
  }

  async #apiKeyLogin(keyId: string, secret: string): Promise<Proved | undefined> {
    const row = await findApiKeyCredentials(this.db, keyId)
    if (row?.status !== 'enabled' || !safeEqual(row.secret_hash, sha256(secret))) return undefined
    const key = await this.#apiKey(keyId)
    return this.#usable(key, 'api') ? { actor: toApiKeyActor(key) } : undefined
  }

  /** Enabled, unexpired, and of the scope asked for: an `api` key on /v1, a `scim` key on /scim/v2. */
  #usable(key: ApiKeyPrincipal | undefined, scope: string): key is ApiKeyPrincipal {
    const now = this.clock.now().getTime()
    return (
      key?.status === 'enabled' && key.scope === scope && (key.expiresAtMs ?? Number.POSITIVE_INFINITY) > now
    )
  }

  /** A live `scim` key's actor from its bearer token `<keyId>.<secret>` (docs/scim.md), from the cache. */
  async scimKey(token: string): Promise<ApiKeyActor | undefined> {
    const dot = token.indexOf('.')
    if (dot !== 36) return undefined
    const key = await this.#apiKey(token.slice(0, dot).toLowerCase())
    if (!this.#usable(key, 'scim')) return undefined
    return safeEqual(key.secretHash, sha256(token.slice(dot + 1))) ? toApiKeyActor(key) : undefined
  }

  async #user(userId: string): Promise<UserPrincipal | undefined> {
    if (!UUID.test(userId)) return undefined
    const principal = await this.#users.getOrLoad(userId, async () => {
      const row = await findUserCredentials(this.db, { id: userId })
      if (!row) return null
      return {
        kind: 'user' as const,
        principalId: row.id,
        userId: row.id,
        email: row.email,
        displayName: userDisplayName(row),
        platformRoleId: row.role_id,
        platformPermissions: permissionSet(row.role_permissions),
        status: row.status,
        passwordChangedAtMs: row.password_changed_at?.getTime() ?? 0,
        platformMfaRequired: row.platform_mfa_required === true,
      }
    })
    return principal ?? undefined
  }

  async #apiKey(keyId: string): Promise<ApiKeyPrincipal | undefined> {
    if (!UUID.test(keyId)) return undefined
    const principal = await this.#keys.getOrLoad(keyId, async () => {
      const row = await findApiKeyCredentials(this.db, keyId)
      if (!row) return null
      return {
        kind: 'api_key' as const,
        principalId: row.id,
        keyId: row.id,
        tenantId: row.tenant_id,
        roleId: row.role_id,
        permissions: permissionSet(row.role_permissions),
        createdBy: row.created_by,
        status: row.status,
        scope: row.scope,
        expiresAtMs: row.expires_at?.getTime() ?? null,
        secretHash: row.secret_hash,
      }
    })
    return principal ?? undefined
  }
}
