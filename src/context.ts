import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { AccessControl } from './access/effective.js'
import type { Clock } from './clock.js'
import type { Config } from './config.js'
import type { Keys } from './crypto/keys.js'
import type { Database } from './db/schema.js'
import type { CounterStore } from './http/rate-limit.js'

/** The platform row: the root every root tenant hangs from. */
export interface Platform {
  id: string
  name: string
}

/**
 * Everything a service function needs, passed in (DESIGN.md: dependencies are passed in). Services never
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
  /** Rate-limit and lock-out counters: shared through a server database, in memory when embedded. */
  counters: CounterStore
}
