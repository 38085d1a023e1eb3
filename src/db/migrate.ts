import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely'
import * as m0001 from './migrations/0001_initial.js'
import * as m0002 from './migrations/0002_outbox_invitation_index.js'
import * as m0003 from './migrations/0003_audit_events.js'
import * as m0004 from './migrations/0004_password_reset.js'
import * as m0005 from './migrations/0005_tenant_roles.js'
import * as m0006 from './migrations/0006_identity_providers.js'
import * as m0007 from './migrations/0007_webhooks_erasure.js'
import * as m0008 from './migrations/0008_shared_counters.js'
import * as m0009 from './migrations/0009_audit_tenant_index_partial.js'
import * as m0010 from './migrations/0010_webhook_guard.js'
import * as m0011 from './migrations/0011_lean_indexes.js'
import * as m0012 from './migrations/0012_closed_lists_as_domains.js'
import * as m0013 from './migrations/0013_scim.js'
import * as m0014 from './migrations/0014_console_sessions.js'
import * as m0015 from './migrations/0015_console_operations.js'
import * as m0016 from './migrations/0016_scim_email_values.js'
import * as m0017 from './migrations/0017_user_sessions.js'
import * as m0018 from './migrations/0018_console_identity.js'
import * as m0019 from './migrations/0019_second_factors.js'
import * as m0020 from './migrations/0020_mfa_policy.js'

/** Every migration, in order. Listed statically so that the compiled build needs no file scanning. */
const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_outbox_invitation_index': m0002,
  '0003_audit_events': m0003,
  '0004_password_reset': m0004,
  '0005_tenant_roles': m0005,
  '0006_identity_providers': m0006,
  '0007_webhooks_erasure': m0007,
  '0008_shared_counters': m0008,
  '0009_audit_tenant_index_partial': m0009,
  '0010_webhook_guard': m0010,
  '0011_lean_indexes': m0011,
  '0012_closed_lists_as_domains': m0012,
  '0013_scim': m0013,
  '0014_console_sessions': m0014,
  '0015_console_operations': m0015,
  '0016_scim_email_values': m0016,
  '0017_user_sessions': m0017,
  '0018_console_identity': m0018,
  '0019_second_factors': m0019,
  '0020_mfa_policy': m0020,
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations() {
    return migrations
  }
}

export interface MigrationOutcome {
  applied: string[]
}

/** Brings the database to the latest schema; applied migrations are recorded by Kysely's migrator. */
// biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationOutcome> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName
    throw new Error(`migration ${failed ?? '(unknown)'} failed: ${(error as Error).message ?? error}`, {
      cause: error,
    })
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) }
}
