import { type Kysely, sql } from 'kysely'
import { uuidv7 } from 'uuidv7'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { bootstrap } from '../../src/bootstrap.js'
import { systemClock } from '../../src/clock.js'
import type { Keys } from '../../src/crypto/keys.js'
import { hashPassword } from '../../src/crypto/passwords.js'
import { encryptSecret } from '../../src/crypto/secrets.js'
import { openDatabase } from '../../src/db/database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Database } from '../../src/db/schema.js'
import { totpSealing } from '../../src/modules/mfa/answers.service.js'
import type { BenchDatabase } from './database.js'

/**
 * Rows the API cannot create quickly, written before the server starts (the embedded database is the
 * server's own while it runs):
 * - the platform, roles and administrator, by the server's own migrations and bootstrap;
 * - the bench's tenant Administrator-to-be, with a password (the API sets passwords only when an
 *   invitation is accepted);
 * - `logins` users sharing one password, so that every POST /v1/tokens names a user not yet verified and
 *   really pays for argon2 (one hash, computed once, verifies for every row);
 * - `invitees`, platform users without a password, each invited once by the invite scenario;
 * - `logins` more users with the same password and an active authenticator app, all of one key (sealed
 *   for each factor with the server's secret key, as the API seals it), for the sign-in with a second
 *   factor: each signs in once, so its code is always fresh.
 */
export interface SeedPlan {
  admin: { email: string; password: string }
  benchUser: { email: string; password: string }
  logins: number
  invitees: number
  /** The authenticator apps' key (base32), and the server's secret key that seals it; none: no such users. */
  totp?: { secret: string; keys: Pick<Keys, 'secretKey' | 'secretKeyId'> }
}

export const BENCH_EMAIL_DOMAIN = 'bench.test'
export const loginEmail = (i: number) => `login-${i}@${BENCH_EMAIL_DOMAIN}`
export const inviteeEmail = (i: number) => `invitee-${i}@${BENCH_EMAIL_DOMAIN}`
export const mfaLoginEmail = (i: number) => `mfa-login-${i}@${BENCH_EMAIL_DOMAIN}`

const CHUNK = 10_000

export async function seedDatabase(
  target: BenchDatabase,
  plan: SeedPlan,
): Promise<{ serverVersion: string }> {
  const database = await openDatabase({ url: target.url, dataDir: target.dataDir, poolSize: 2 })
  try {
    const { db } = database
    await migrateToLatest(db)
    await bootstrap(db, systemClock, plan.admin)
    // Changed a second ago: tokens issued from now on are newer than the password.
    const changedAt = new Date(Date.now() - 1_000)
    const passwordHash = await hashPassword(plan.benchUser.password)
    await insertUsers(db, [plan.benchUser.email], passwordHash, changedAt)
    for (let from = 0; from < plan.logins; from += CHUNK) {
      const emails = range(from, Math.min(from + CHUNK, plan.logins)).map(loginEmail)
      await insertUsers(db, emails, passwordHash, changedAt)
    }
    for (let from = 0; plan.totp && from < plan.logins; from += CHUNK) {
      const emails = range(from, Math.min(from + CHUNK, plan.logins)).map(mfaLoginEmail)
      await insertFactors(db, await insertUsers(db, emails, passwordHash, changedAt), plan.totp)
    }
    for (let from = 0; from < plan.invitees; from += CHUNK) {
      const emails = range(from, Math.min(from + CHUNK, plan.invitees)).map(inviteeEmail)
      await insertUsers(db, emails, null, null)
    }
    const { rows } = await sql<{ server_version: string }>`show server_version`.execute(db)
    return { serverVersion: rows[0]!.server_version }
  } finally {
    await database.close()
  }
}

/** Platform Users, enabled, in one statement per chunk. */
async function insertUsers(
  db: Kysely<Database>,
  emails: string[],
  passwordHash: string | null,
  passwordChangedAt: Date | null,
): Promise<string[]> {
  const now = new Date()
  const ids = emails.map(() => uuidv7())
  await sql`
    insert into users (id, email, role_id, status, password_hash, password_changed_at, created, updated)
    select u.id, u.email, ${ROLE_IDS.platformUser}::uuid, 'enabled', ${passwordHash}, ${passwordChangedAt}::timestamptz,
      ${now}::timestamptz, ${now}::timestamptz
    from unnest(${ids}::uuid[], ${emails}::text[]) as u(id, email)
  `.execute(db)
  return ids
}

/** An active authenticator app for each user, of one key, sealed per factor (mfa/answers.service.ts). */
async function insertFactors(
  db: Kysely<Database>,
  userIds: string[],
  totp: NonNullable<SeedPlan['totp']>,
): Promise<void> {
  const ids = userIds.map(() => uuidv7())
  const secrets = ids.map((id) => JSON.stringify(encryptSecret(totp.keys, totp.secret, totpSealing(id))))
  await sql`
    insert into user_factors (id, user_id, type, name, status, created, totp_secret)
    select f.id, f.user_id, 'totp', 'Bench app', 'active', ${new Date()}::timestamptz, f.secret::jsonb
    from unnest(${ids}::uuid[], ${userIds}::uuid[], ${secrets}::text[]) as f(id, user_id, secret)
  `.execute(db)
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i)
}
