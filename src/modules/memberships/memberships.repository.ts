import { type Kysely, sql, type Transaction, type Updateable } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { Database, MembershipRow, MembershipStatus, TenantUsersTable } from '../../db/schema.js'
import { INVITATION_EMAIL, type NewOutboxRow } from '../../outbox/outbox.repository.js'
import { DEFAULT_WEBRTC } from './extensions.js'
import type { ExtensionRecord } from './memberships.schemas.js'

/** SQL for tenant users (memberships). Each function takes the executor (db or transaction) first. */

type Executor = Kysely<Database> | Transaction<Database>

export interface MembershipRecordRow extends MembershipRow {
  email: string
  first_name: string
  last_name: string
  email_status: 'queued' | 'sent' | 'failed' | null
}

function selectMemberships(db: Executor) {
  return db
    .selectFrom('tenant_users as tu')
    .innerJoin('users as u', 'u.id', 'tu.user_id')
    .selectAll('tu')
    .select(['u.email', 'u.first_name', 'u.last_name'])
    .select(
      // The delivery state of the membership's latest invitation e-mail. Mail superseded before it was
      // sent is deleted with the invitation it carried, so this is the mail of the current invitation.
      sql<'queued' | 'sent' | 'failed' | null>`(
        select o.status from outbox o
        where o.tenant_id = tu.tenant_id and o.kind = ${INVITATION_EMAIL}
          and o.payload->>'userId' = tu.user_id::text
        order by o.created desc, o.id desc limit 1)`.as('email_status'),
    )
}

/** A new membership of the user with some e-mail: what the request decided; the user's id is the database's. */
export interface NewMembershipByEmail {
  email: string
  tenantId: string
  roleId: string
  status: MembershipStatus
  noPassword: boolean | null
  defaultIdentityProvider: string | null
  invitation: { expiresAt: Date; tokenHash: string; invitedBy: string } | null
  /** The extensions given, and whether the user's default webrtc extension goes first. */
  extensions: { given: ExtensionRecord[]; defaultFirst: boolean }
  /** Accepted at once: the first extension becomes the active one (SPEC §2.3). */
  activateFirstExtension: boolean
  workStationId: string
  actorId: string
  now: Date
}

/**
 * Inserts the membership of the user with `m.email` and, for an invitation, its e-mail's outbox row
 * (its payload completed with the user's id) — one statement: one round trip, atomic without a
 * transaction, and the user look-up in it. Returns the stored record, or undefined when no user has the
 * e-mail (nothing is written). A second membership of the same user in a tenant is 409 already_member.
 *
 * Hand-written rather than built with Kysely: it is the hot path of every invitation, and its text is one
 * of a few fixed ones, so the pool's prepared statements plan it once.
 */
export async function insertMembershipByEmail(
  db: Executor,
  m: NewMembershipByEmail,
  mail?: NewOutboxRow,
): Promise<MembershipRecordRow | undefined> {
  const { given, defaultFirst } = m.extensions
  const defaultExtension = sql`(${JSON.stringify(DEFAULT_WEBRTC)}::jsonb || jsonb_build_object('value', invitee.id::text))`
  const extensions = defaultFirst
    ? sql`jsonb_build_array(${defaultExtension}) || ${JSON.stringify(given)}::jsonb`
    : sql`${JSON.stringify(given)}::jsonb`
  const extension = defaultFirst ? sql`invitee.id::text` : sql`${given[0]?.value ?? ''}::text`
  const active = !m.activateFirstExtension
    ? sql`null::jsonb`
    : defaultFirst
      ? defaultExtension
      : sql`${JSON.stringify(given[0] ?? null)}::jsonb`
  const queueMail = mail
    ? sql`, mail as (
        insert into outbox (id, tenant_id, kind, payload, next_attempt_at, created)
        select ${mail.id}::uuid, ${mail.tenantId}::uuid, ${mail.kind}::text,
          ${JSON.stringify(mail.payload)}::jsonb || jsonb_build_object('userId', membership.user_id),
          ${mail.now}::timestamptz, ${mail.now}::timestamptz
        from membership)`
    : sql``
  const query = sql<MembershipRecordRow>`
    with invitee as (select id, email, first_name, last_name from users where email = ${m.email}::text),
    membership as (
      insert into tenant_users (tenant_id, user_id, role_id, status, no_password, default_identity_provider,
        invitation_expiry_date, invitation_token_hash, invited_by, extension, extensions, active_extension,
        work_station_id, created, created_by, updated, updated_by)
      select ${m.tenantId}::uuid, invitee.id, ${m.roleId}::uuid, ${m.status}::text, ${m.noPassword}::boolean,
        ${m.defaultIdentityProvider}::uuid, ${m.invitation?.expiresAt ?? null}::timestamptz,
        ${m.invitation?.tokenHash ?? null}::text, ${m.invitation?.invitedBy ?? null}::uuid,
        ${extension}, ${extensions}, ${active}, ${m.workStationId}::text,
        ${m.now}::timestamptz, ${m.actorId}::uuid, ${m.now}::timestamptz, ${m.actorId}::uuid
      from invitee
      returning *)${queueMail}
    select membership.*, invitee.email, invitee.first_name, invitee.last_name,
      ${mail ? 'queued' : null}::text as email_status
    from membership cross join invitee`
  const result = await withConstraintErrors(() => query.execute(db))
  return result.rows[0]
}

export async function findMembership(
  db: Executor,
  tenantId: string,
  userId: string,
): Promise<MembershipRecordRow | undefined> {
  return selectMemberships(db)
    .where('tu.tenant_id', '=', tenantId)
    .where('tu.user_id', '=', userId)
    .executeTakeFirst()
}

export async function listMemberships(
  db: Executor,
  tenantId: string,
  page: { afterUserId?: string | undefined; limit?: number | undefined },
): Promise<MembershipRecordRow[]> {
  let query = selectMemberships(db).where('tu.tenant_id', '=', tenantId).orderBy('tu.user_id')
  if (page.afterUserId) query = query.where('tu.user_id', '>', page.afterUserId)
  if (page.limit !== undefined) query = query.limit(page.limit + 1)
  return query.execute()
}

/**
 * Updates a membership only while it still has `expectedStatus` (and, when given, the expected token
 * hash): a concurrent move of the same membership makes this return false instead of overwriting it.
 */
export async function updateMembership(
  db: Executor,
  key: { tenantId: string; userId: string },
  expected: { status: MembershipStatus; tokenHash?: string | null },
  changes: Updateable<TenantUsersTable>,
): Promise<boolean> {
  let query = db
    .updateTable('tenant_users')
    .set(changes)
    .where('tenant_id', '=', key.tenantId)
    .where('user_id', '=', key.userId)
    .where('status', '=', expected.status)
  if (expected.tokenHash !== undefined) {
    query =
      expected.tokenHash === null
        ? query.where('invitation_token_hash', 'is', null)
        : query.where('invitation_token_hash', '=', expected.tokenHash)
  }
  const result = await query.executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Whether the user holds a membership (any status) in the tenant. */
export async function isMember(db: Executor, tenantId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_users')
    .select('user_id')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row !== undefined
}

export interface InvitationRow {
  tenant_id: string
  user_id: string
  status: MembershipStatus
  invitation_expiry_date: Date | null
  no_password: boolean | null
  active_extension: unknown
  /** The extension that becomes active on acceptance when none is. */
  first_extension: ExtensionRecord | null
  tenant_name: string
  role_name: string
  email: string
  has_password: boolean
}

/** The membership an invitation token (by its hash) belongs to, with what the acceptance page shows. */
export async function findByTokenHash(db: Executor, tokenHash: string): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('tenant_users as tu')
    .innerJoin('tenants as t', 't.id', 'tu.tenant_id')
    .innerJoin('roles as r', 'r.id', 'tu.role_id')
    .innerJoin('users as u', 'u.id', 'tu.user_id')
    .select([
      'tu.tenant_id',
      'tu.user_id',
      'tu.status',
      'tu.invitation_expiry_date',
      'tu.no_password',
      'tu.active_extension',
      't.name as tenant_name',
      'r.name as role_name',
      'u.email',
    ])
    .select(sql<boolean>`u.password_hash is not null`.as('has_password'))
    .select(sql<ExtensionRecord | null>`tu.extensions->0`.as('first_extension'))
    .where('tu.invitation_token_hash', '=', tokenHash)
    .executeTakeFirst()
}

/** Removes one membership (offboarding, API.md §14); false when there was none. */
export async function deleteMembership(db: Executor, tenantId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('tenant_users')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}
