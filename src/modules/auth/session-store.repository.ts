import { type Kysely, sql } from 'kysely'
import type { AuthMethod, Database } from '../../db/schema.js'

/**
 * The statements authentication runs on `user_sessions` (migration 0017): a sign-in's row, the
 * revocations every process polls for, the `last_seen` stamps, and the sweep of ended rows. Listing and
 * revoking are the sessions module's (modules/sessions).
 */

export interface NewSession {
  id: string
  userId: string
  created: Date
  expiresAt: Date
  ip: string | null
  userAgent: string | null
  authMethods: readonly AuthMethod[]
}

/**
 * Writes a session only while the person may still have it: not disabled or erased and, for a password
 * sign-in, still holding the password that was checked. The user row is read FOR SHARE, so a concurrent
 * password change or disabling either waits for this insert — and then its trigger ends the new session —
 * or went first, and this finds no row. Without it, a sign-in checked against the old password could
 * commit a live session just after the change ended every other (docs/security.md). A sign-in finished by
 * a second factor names instead the moment its password was checked: no change since. Whether it was written.
 * The methods travel as text[]: the embedded database's driver serializes a parameter by the types it
 * knew when it opened, and a database migrated by this process learnt of auth_method[] only later.
 */
export async function insertSession(
  db: Kysely<Database>,
  session: NewSession,
  passwordHash: string | undefined,
  passwordUnchangedSince?: Date,
): Promise<boolean> {
  const samePassword = passwordHash === undefined ? sql`` : sql`and u.password_hash = ${passwordHash}`
  const unchanged =
    passwordUnchangedSince === undefined
      ? sql``
      : sql`and (u.password_changed_at is null or u.password_changed_at <= ${passwordUnchangedSince}::timestamptz)`
  const inserted = await sql<{ id: string }>`
    insert into user_sessions (id, user_id, created, last_seen, ip, user_agent, auth_methods, expires_at)
    select ${session.id}::uuid, u.id, ${session.created}::timestamptz, ${session.created}::timestamptz,
           ${session.ip}::text, ${session.userAgent}::text, ${[...session.authMethods]}::text[]::auth_method[],
           ${session.expiresAt}::timestamptz
    from users u
    where u.id = ${session.userId}::uuid and u.status not in ('disabled', 'erased') ${samePassword} ${unchanged}
    for share of u
    returning id`.execute(db)
  return inserted.rows.length > 0
}

/** A revoked session and when its tokens expire anyway (epoch ms): past that, it need not be kept. */
export type RevokedSession = [id: string, expiresAtMs: number]

/**
 * Sessions revoked at or after `since` (the database's clock) whose tokens have not expired by `now`, and
 * the database's time of this read — the next read's `since`, less the margin the caller allows for a
 * revocation stamped before it committed. One row whatever the count, so the time comes back with none.
 */
export async function revokedSince(
  db: Kysely<Database>,
  since: Date | undefined,
  now: Date,
): Promise<{ databaseNow: Date; revoked: RevokedSession[] }> {
  const from = since ?? new Date(0)
  const { rows } = await sql<{ databaseNow: Date; revoked: RevokedSession[] }>`
    select now() as "databaseNow",
           coalesce(json_agg(json_build_array(id, (extract(epoch from expires_at) * 1000)::bigint)), '[]')
             as revoked
    from user_sessions
    where revoked_at >= ${from}::timestamptz and expires_at > ${now}::timestamptz`.execute(db)
  const row = rows[0]
  if (!row) throw new Error('the revocation read returned no row')
  const revoked =
    typeof row.revoked === 'string' ? (JSON.parse(row.revoked) as RevokedSession[]) : row.revoked
  return { databaseNow: new Date(row.databaseNow), revoked }
}

const iso = (at: Date) => at.toISOString()

/** Moves `last_seen` forward for each session (never back: another process may have written later). */
export async function writeLastSeen(db: Kysely<Database>, seen: ReadonlyMap<string, Date>): Promise<void> {
  if (seen.size === 0) return
  await sql`
    update user_sessions s set last_seen = v.seen
    from unnest(${[...seen.keys()]}::uuid[], ${[...seen.values()].map(iso)}::timestamptz[]) as v(id, seen)
    where s.id = v.id and s.last_seen < v.seen`.execute(db)
}

/** Deletes sessions whose tokens have all expired: nothing can present them any more. */
export async function deleteEndedSessions(db: Kysely<Database>, now: Date): Promise<bigint> {
  const result = await db.deleteFrom('user_sessions').where('expires_at', '<=', now).executeTakeFirst()
  return result.numDeletedRows
}
