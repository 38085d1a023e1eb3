import { type Kysely, sql } from 'kysely'
import type { Keys } from '../../crypto/keys.js'
import { containsPattern } from '../../db/contains-pattern.js'
import { nextUpdated } from '../../db/row-version.js'
import type { Database } from '../../db/schema.js'
import { forgetResponsesQuoting } from '../../http/idempotency-seal.js'
import { PERSONAL_AUDIT_FIELDS } from './user-audit.js'

/**
 * SQL of an erasure (docs/product.md#offboarding-and-erasure), each run inside the erasure's transaction. What a person leaves behind
 * besides its own row: memberships, the API keys it created, invitation mail queued or kept in the outbox,
 * stored idempotent responses that carry its data, and the personal fields inside audit events.
 */

export async function lockUser(db: Kysely<Database>, id: string) {
  return db.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

export async function removeMemberships(db: Kysely<Database>, userId: string): Promise<string[]> {
  const rows = await db
    .deleteFrom('tenant_users')
    .where('user_id', '=', userId)
    .returning('tenant_id')
    .execute()
  return rows.map((row) => row.tenant_id)
}

export async function deleteApiKeysCreatedBy(db: Kysely<Database>, userId: string) {
  return db.deleteFrom('api_keys').where('created_by', '=', userId).returning(['tenant_id', 'id']).execute()
}

/** The person's second factors and recovery codes (migration 0019) go with the person. */
export async function deleteSecondFactors(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom('user_factors').where('user_id', '=', userId).execute()
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute()
}

/** The record stays, with nothing personal in it: the e-mail column gets a placeholder (it is unique). */
export async function eraseUserRow(db: Kysely<Database>, userId: string, actorId: string, now: Date) {
  await db
    .updateTable('users')
    .set({
      email: `erased-${userId}`,
      first_name: '',
      last_name: '',
      external_id: '',
      personal_telephone: null,
      password_hash: null,
      password_changed_at: now,
      reset_password_expiry_date: null,
      default_tenant: null,
      additional_role_ids: [],
      status: 'erased',
      updated: nextUpdated(now),
      updated_by: actorId,
    })
    .where('id', '=', userId)
    .execute()
}

/**
 * The person's data out of the outbox (its invitation mails, whatever their state), stored idempotent
 * responses and audit events: the personal fields of events about the user are dropped, and any other
 * event change that quotes the e-mail or the full name loses that field.
 */
export async function scrubPersonalData(
  db: Kysely<Database>,
  userId: string,
  personal: { email: string; fullName: string },
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>,
): Promise<void> {
  // Shorter texts would match too much that is not the person's.
  const texts = [personal.email, personal.fullName].filter((t) => t.trim().length >= 3)
  const patterns = texts.map(containsPattern)
  await db
    .deleteFrom('outbox')
    .where((eb) =>
      eb.or([
        eb(sql`payload->>'userId'`, '=', userId),
        ...patterns.map((p) => eb(sql`payload::text`, 'ilike', p)),
      ]),
    )
    .where('kind', '!=', 'webhook')
    .execute()
  await forgetResponsesQuoting(db, keys, texts)
  await sql`
    update audit_events set changes = changes - ${PERSONAL_AUDIT_FIELDS}::text[]
    where target_id = ${userId}::uuid and changes ?| ${PERSONAL_AUDIT_FIELDS}::text[]
  `.execute(db)
  if (patterns.length > 0) {
    await sql`
      update audit_events set changes = coalesce((
        select jsonb_object_agg(c.key, c.value) from jsonb_each(changes) as c
        where not (c.value::text ilike any (${patterns}::text[]))
      ), '{}'::jsonb)
      where changes::text ilike any (${patterns}::text[])
    `.execute(db)
  }
}
