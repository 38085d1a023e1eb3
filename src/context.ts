import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { TtlCache } from './access/cache.js'
import type { AccessControl } from './access/effective.js'
import type { RoleCatalog } from './access/role-catalog.js'
import type { Clock } from './clock.js'
import type { Config } from './config.js'
import type { Keys } from './crypto/keys.js'
import type { Database } from './db/schema.js'
import type { StatementBatchers } from './db/statement-batcher.js'
import type { OutboundLookup } from './http/outbound.js'
import type { CounterStore, FailureLimiter } from './http/rate-limit.js'
import type { OutboxSignal } from './outbox/outbox-signal.js'

/** The request options a second-factor challenge carries when the account has a passkey, and their challenge. */
export interface WebAuthnRequest {
  /** PublicKeyCredentialRequestOptionsJSON: sent to the client as the challenge's `webauthn`. */
  options: Record<string, unknown>
  /** The options' challenge (base64url), kept with the mfa challenge (`webauthn_challenge`). */
  challenge: string
}

/**
 * The WebAuthn half of answering a second-factor challenge (docs/security.md, "Signing in with a second
 * factor"), implemented by modules/mfa/webauthn-answers.ts and wired by buildApp. Both calls are for one
 * account: a sign-in's or step-up's challenge is bound to it.
 */
export interface WebAuthnAnswers {
  /** Request options over the account's active passkeys (userVerification "required"); none: undefined. */
  requestOptions(userId: string): Promise<WebAuthnRequest | undefined>
  /**
   * Verifies an assertion against the account's passkeys and the challenge its options carried (origin,
   * relying party, user verification, a counter that only grows). The factor and the amr it earns;
   * undefined for a wrong answer (counted as one); a 400 naming `webauthn` for what is no assertion.
   */
  verify(
    userId: string,
    response: Record<string, unknown>,
    expectedChallenge: string,
  ): Promise<{ factorId: string; amr: 'hwk' | 'swk' } | undefined>
}

/** Second factors' per-application state (modules/mfa, docs/security.md "Second factors"). */
export interface SecondFactorState {
  /** Wrong second factors per account: 10 in 15 minutes, then 429 (modules/mfa/answer-limits.ts). */
  failures: FailureLimiter
  /**
   * Whether Basic with a password is refused for a person (an active factor, or a policy requiring one),
   * for a few seconds: cleared by this process's factor changes.
   */
  hasFactor: TtlCache<string, boolean>
  /** The WebAuthn half of answering a challenge; undefined until wired, and then assertions are refused. */
  webauthn: WebAuthnAnswers | undefined
}

/** The platform row: the root every root tenant hangs from. */
export interface Platform {
  id: string
  name: string
}

/**
 * Everything a service function needs, passed in (docs/architecture.md#one-source-one-path: dependencies are passed in). Services never
 * read process.env or the wall clock themselves.
 */
export interface ServiceContext {
  db: Kysely<Database>
  config: Config
  clock: Clock
  keys: Keys
  access: AccessControl
  platform: Platform
  logger: Logger
  /** The platform roles and built-in tenant roles, cached briefly (roles.service.ts loadRoleCatalog). */
  roleCatalog: TtlCache<'all', Promise<RoleCatalog>>
  /**
   * Each tenant's SCIM default role (its scim_settings, else Agent), cached briefly for SCIM creates
   * (scim-context.ts provisioningRoleId); cleared with every permission cache and by a settings change.
   */
  scimDefaultRoles: TtlCache<string, string>
  /** Invitation e-mails per invitee and failed token look-ups per address (invitation-limits.ts). */
  invitationLimiters: { mails: FailureLimiter; lookups: FailureLimiter }
  /** Password-reset requests per e-mail and per client address (users/password-reset.service.ts). */
  passwordResetLimiters: { byEmail: FailureLimiter; byAddress: FailureLimiter }
  /** Hands this application's outbox worker the mail its writes queue, and wakes it (outbox-signal.ts). */
  outboxSignal: OutboxSignal
  /** Writes that share a statement when they arrive together, by kind (db/statement-batcher.ts). */
  statementBatchers: StatementBatchers
  /** Rate-limit and lock-out counters: shared through a server database, in memory when embedded. */
  counters: CounterStore
  /** Second factors: wrong answers per account, and the WebAuthn implementation once wired. */
  secondFactors: SecondFactorState
  /**
   * How the outbound rule resolves a name (http/outbound.ts); dns.lookup when absent. Tests hand in a
   * resolver to map a name to a loopback or private address.
   */
  outboundLookup?: OutboundLookup
}

/**
 * The per-application state above: each application (each test's app too) has its own, made by buildApp,
 * and none lives in module-level maps.
 */
export type AppState = Pick<
  ServiceContext,
  | 'roleCatalog'
  | 'scimDefaultRoles'
  | 'invitationLimiters'
  | 'passwordResetLimiters'
  | 'outboxSignal'
  | 'statementBatchers'
  | 'secondFactors'
>
