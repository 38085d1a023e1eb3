import { type Kysely, sql } from 'kysely'
import type { Database } from '../../db/schema.js'

/**
 * A person's second factors (migration 0019, `user_factors`; docs/security.md, "Second factors"): the
 * authenticator apps (TOTP) and passkeys. The only place with SQL on the table; the WebAuthn files read
 * and write passkeys through it too.
 */

/** A factor as the services read it: never its TOTP key (read alone, by totpSecretOf). */
export interface FactorRow {
  id: string
  user_id: string
  type: 'totp' | 'webauthn'
  name: string
  status: 'pending' | 'active'
  created: Date
  last_used: Date | null
  credential_id: string | null
  public_key: Uint8Array | null
  /** bigint columns come back as text. */
  sign_count: string | null
  transports: string[] | null
  device_type: string | null
}

const FACTOR_COLUMNS = [
  'id',
  'user_id',
  'type',
  'name',
  'status',
  'created',
  'last_used',
  'credential_id',
  'public_key',
  'sign_count',
  'transports',
  'device_type',
] as const

/** A new factor: a pending TOTP (its key sealed beforehand) or an active passkey. */
export interface NewFactor {
  id: string
  userId: string
  type: 'totp' | 'webauthn'
  name: string
  status: 'pending' | 'active'
  created: Date
  /** A SecretEnvelope (crypto/secrets.ts) of the TOTP key, bound to the factor's id. */
  totpSecret?: Record<string, unknown>
  credentialId?: string
  publicKey?: Uint8Array
  signCount?: number
  transports?: string[]
  deviceType?: string
}

export async function insertFactor(db: Kysely<Database>, factor: NewFactor): Promise<void> {
  await db
    .insertInto('user_factors')
    .values({
      id: factor.id,
      user_id: factor.userId,
      type: factor.type,
      name: factor.name,
      status: factor.status,
      created: factor.created,
      totp_secret: factor.totpSecret ? JSON.stringify(factor.totpSecret) : null,
      credential_id: factor.credentialId ?? null,
      public_key: factor.publicKey ?? null,
      sign_count: factor.signCount ?? null,
      transports: factor.transports ?? null,
      device_type: factor.deviceType ?? null,
    })
    .execute()
}

/** The person's active factors (what a sign-in may be answered with), oldest first. */
export async function listActiveFactors(db: Kysely<Database>, userId: string): Promise<FactorRow[]> {
  return db
    .selectFrom('user_factors')
    .select(FACTOR_COLUMNS)
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .orderBy('created')
    .orderBy('id')
    .execute()
}

/** The person's pending factors created after `after` (older ones count for nothing and are swept). */
export async function listPendingFactors(
  db: Kysely<Database>,
  userId: string,
  after: Date,
): Promise<FactorRow[]> {
  return db
    .selectFrom('user_factors')
    .select(FACTOR_COLUMNS)
    .where('user_id', '=', userId)
    .where('status', '=', 'pending')
    .where('created', '>', after)
    .orderBy('created')
    .execute()
}

/** Whether the person has an active TOTP or passkey (recovery codes are a fallback, not a factor). */
export async function hasActiveFactor(db: Kysely<Database>, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('user_factors')
    .select('id')
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/** One factor of the person (pending or active); another person's is not found. */
export async function findFactor(
  db: Kysely<Database>,
  userId: string,
  factorId: string,
): Promise<FactorRow | undefined> {
  return db
    .selectFrom('user_factors')
    .select(FACTOR_COLUMNS)
    .where('user_id', '=', userId)
    .where('id', '=', factorId)
    .executeTakeFirst()
}

/** A passkey by its credential id (base64url), whoever holds it: a discoverable passkey names the account. */
export async function findFactorByCredentialId(
  db: Kysely<Database>,
  credentialId: string,
): Promise<FactorRow | undefined> {
  return db
    .selectFrom('user_factors')
    .select(FACTOR_COLUMNS)
    .where('credential_id', '=', credentialId)
    .where('status', '=', 'active')
    .executeTakeFirst()
}

/** The person's active authenticator apps with their sealed keys, in one read (a code's check). */
export async function listActiveTotpSecrets(
  db: Kysely<Database>,
  userId: string,
): Promise<Array<{ id: string; secret: Record<string, unknown> }>> {
  const rows = await db
    .selectFrom('user_factors')
    .select(['id', 'totp_secret'])
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .where('type', '=', 'totp')
    .orderBy('created')
    .execute()
  return rows.flatMap((row) => (row.totp_secret ? [{ id: row.id, secret: row.totp_secret }] : []))
}

/** The sealed TOTP key of a factor, with its last accepted step. */
export async function totpSecretOf(
  db: Kysely<Database>,
  factorId: string,
): Promise<{ secret: Record<string, unknown>; lastStep: number | null } | undefined> {
  const row = await db
    .selectFrom('user_factors')
    .select(['totp_secret', 'totp_last_step'])
    .where('id', '=', factorId)
    .where('type', '=', 'totp')
    .executeTakeFirst()
  if (!row?.totp_secret) return undefined
  return {
    secret: row.totp_secret,
    lastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
  }
}

/**
 * Takes TOTP time step `step` for a factor: only when it is later than the last one taken, in one
 * conditional UPDATE, so a code is accepted once — two requests racing with the same code cannot both win
 * (RFC 6238 section 5.2). `activate` turns a pending factor active in the same statement (its
 * verification); otherwise the factor must already be active. Whether the step was taken.
 */
export async function takeTotpStep(
  db: Kysely<Database>,
  factorId: string,
  step: number,
  now: Date,
  activate = false,
): Promise<boolean> {
  const result = await db
    .updateTable('user_factors')
    .set({ totp_last_step: step, last_used: now, ...(activate ? { status: 'active' as const } : {}) })
    .where('id', '=', factorId)
    .where('status', '=', activate ? 'pending' : 'active')
    .where(sql<boolean>`(totp_last_step is null or totp_last_step < ${step}::bigint)`)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * A passkey's new signature counter after an assertion, only forward (a counter that goes backwards means
 * a cloned authenticator): `where sign_count < $new`, or both zero for authenticators that keep none.
 * Whether it was recorded.
 */
export async function recordPasskeyUse(
  db: Kysely<Database>,
  factorId: string,
  signCount: number,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('user_factors')
    .set({ sign_count: signCount, last_used: now })
    .where('id', '=', factorId)
    .where('type', '=', 'webauthn')
    .where(sql<boolean>`sign_count < ${signCount}::bigint or (sign_count = 0 and ${signCount}::bigint = 0)`)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Removes one factor of the person; whether it was there. */
export async function deleteFactor(db: Kysely<Database>, userId: string, factorId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('user_factors')
    .where('user_id', '=', userId)
    .where('id', '=', factorId)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Removes every factor of the person (an administrator's reset, erasure); the ids removed. */
export async function deleteUserFactors(db: Kysely<Database>, userId: string): Promise<string[]> {
  const rows = await db.deleteFrom('user_factors').where('user_id', '=', userId).returning('id').execute()
  return rows.map((row) => row.id)
}

/** Pending TOTP factors never confirmed: they count for nothing and go after ten minutes. */
export async function deleteStalePendingFactors(db: Kysely<Database>, createdBefore: Date): Promise<bigint> {
  const result = await db
    .deleteFrom('user_factors')
    .where('status', '=', 'pending')
    .where('created', '<', createdBefore)
    .executeTakeFirst()
  return result.numDeletedRows
}
