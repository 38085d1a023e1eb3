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
>
