import { randomBytes } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import { BUILT_IN_ROLES, PLATFORM_NAME, REGIONS, ROLE_IDS } from './access/permissions.js'
import type { Clock } from './clock.js'
import type { Platform } from './context.js'
import { hashPassword } from './crypto/passwords.js'
import { newId } from './crypto/uuid7.js'
import type { Database } from './db/schema.js'

export interface BootstrapOutcome {
  platform: Platform
  /** Set only on the start that created the first administrator. */
  admin?: { email: string; password: string; generated: boolean }
}

// Serialises concurrent first starts of several processes on one database.
const BOOTSTRAP_LOCK = 7_347_001

/**
 * Seeds an empty database (docs/api.md#authentication): the platform, the regions, the built-in roles and one Platform
 * Administrator. Idempotent: on a later start it only reads the platform back. Built-in roles and regions
 * that a newer version adds are inserted, never changed.
 */
export async function bootstrap(
  db: Kysely<Database>,
  clock: Clock,
  admin: { email: string; password: string | undefined },
): Promise<BootstrapOutcome> {
  const existing = await db.selectFrom('platform').select(['id', 'name']).executeTakeFirst()
  const password = admin.password ?? randomBytes(12).toString('base64url')
  // Hashing is slow on purpose: done before the transaction, and only when the platform is not there yet.
  const passwordHash = existing ? undefined : await hashPassword(password)

  return db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`.execute(tx)
    const now = clock.now()
    await tx
      .insertInto('regions')
      .values(REGIONS.map((r) => ({ id: r.id, name: r.name, description: r.description })))
      .onConflict((oc) => oc.doNothing())
      .execute()
    await tx
      .insertInto('roles')
      .values(
        BUILT_IN_ROLES.map((role) => ({
          id: role.id,
          scope: role.scope,
          tenant_id: null,
          name: role.name,
          name_key: role.name.toLowerCase(),
          description: role.description,
          permissions: [...role.permissions],
          built_in: true,
          created: now,
          created_by: null,
          updated: now,
          updated_by: null,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute()

    const platform = await tx.selectFrom('platform').select(['id', 'name']).executeTakeFirst()
    if (platform || !passwordHash) return { platform: platform ?? (existing as Platform) }

    const created: Platform = { id: newId(), name: PLATFORM_NAME }
    await tx
      .insertInto('platform')
      .values({ ...created, created: now })
      .execute()
    await tx
      .insertInto('users')
      .values({
        id: newId(),
        email: admin.email,
        role_id: ROLE_IDS.platformAdministrator,
        first_name: 'Platform',
        last_name: 'Administrator',
        status: 'enabled',
        password_hash: passwordHash,
        password_changed_at: now,
        created: now,
        updated: now,
      })
      .execute()
    return {
      platform: created,
      admin: { email: admin.email, password, generated: admin.password === undefined },
    }
  })
}
