import { type Kysely, sql, type Transaction, type Updateable } from 'kysely'
import { keysetPage } from '../../db/keyset.js'
import { nextUpdated } from '../../db/row-version.js'
import type {
  Database,
  MembershipRow,
  MembershipStatus,
  MembershipsTable,
  OutboxStatus,
} from '../../db/schema.js'
import { ifMatchUpdated } from '../../http/request-context.js'
import { INVITATION_EMAIL } from '../../outbox/outbox.repository.js'
import { hasActiveFactorSql } from '../mfa-policy/mfa-policy.repository.js'
import { personContains } from '../users/users.repository.js'
import type { ExtensionRecord } from './memberships.schemas.js'

/**
 * SQL for memberships (table tenant_users): reads, updates and deletes. Each function takes the executor
 * (db or transaction) first. New memberships are inserted through the write unit (membership-write.ts,
 * with membership-insert.ts' row).
 */

type Executor = Kysely<Database> | Transaction<Database>

export interface MembershipRecordRow extends MembershipRow {
  email: string
  first_name: string
  last_name: string
  external_id: string
  platform_status: string
  role_name: string | null
  email_status: OutboxStatus | null
  /** The member has a second factor (an active TOTP or passkey); a new member's write may not say. */
  has_factor?: boolean
}

function selectMemberships(db: Executor) {
  return db
    .selectFrom('tenant_users as tu')
    .innerJoin('users as u', 'u.id', 'tu.user_id')
    .selectAll('tu')
    .select(['u.email', 'u.first_name', 'u.last_name', 'u.external_id', 'u.status as platform_status'])
    .select(sql<string | null>`(select r.name from roles r where r.id = tu.role_id)`.as('role_name'))
    .select(
      // The delivery state of the membership's latest invitation e-mail. Mail superseded before it was
      // sent is deleted with the invitation it carried, so this is the mail of the current invitation.
      sql<OutboxStatus | null>`(
        select o.status from outbox o
        where o.tenant_id = tu.tenant_id and o.kind = ${INVITATION_EMAIL}
          and o.payload->>'userId' = tu.user_id::text
        order by o.created desc, o.id desc limit 1)`.as('email_status'),
    )
    .select(hasActiveFactorSql(sql`tu.user_id`).as('has_factor'))
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

/** The role of each of `userIds` who is a member of the tenant, in one read (`user_id = any(…)`). */
export async function findMemberRoles(
  db: Executor,
  tenantId: string,
  userIds: readonly string[],
): Promise<Pick<MembershipRow, 'user_id' | 'role_id'>[]> {
  return db
    .selectFrom('tenant_users')
    .select(['user_id', 'role_id'])
    .where('tenant_id', '=', tenantId)
    .where(sql<boolean>`user_id = any(${[...userIds]}::uuid[])`)
    .execute()
}

export async function listMembershipRows(
  db: Executor,
  tenantId: string,
  page: {
    /** The cursor: the last user id of the previous page. */
    afterId?: string | undefined
    limit?: number | undefined
    status?: MembershipStatus | undefined
    /** Contains-match on the e-mail or the full name, ignoring case (`?q=`). */
    search?: string | undefined
    /** Only the members with (true) or without (false) a second factor (`?mfa=`). */
    hasFactor?: boolean | undefined
  },
): Promise<MembershipRecordRow[]> {
  let query = selectMemberships(db).where('tu.tenant_id', '=', tenantId)
  if (page.status !== undefined) query = query.where('tu.status', '=', page.status)
  if (page.hasFactor !== undefined) {
    const has = hasActiveFactorSql(sql`tu.user_id`)
    query = query.where(page.hasFactor ? has : sql<boolean>`not ${has}`)
  }
  if (page.search !== undefined) query = query.where(personContains(page.search))
  return keysetPage(query, 'tu.user_id', page).execute()
}

/**
 * Updates a membership only while it still has the expected status (and, when given, the expected token
 * hash) and — when the request carried If-Match — is still the version the caller read (db/row-version.ts),
 * all in the one statement. 'moved': a concurrent move of the same membership got there first, nothing was
 * overwritten; 'stale': the If-Match no longer names the stored version.
 */
export async function updateMembershipRow(
  db: Executor,
  key: { tenantId: string; userId: string },
  expected: { status: MembershipStatus; tokenHash?: string | null },
  changes: Updateable<MembershipsTable> & { updated: Date },
): Promise<'updated' | 'moved' | 'stale'> {
  const ifMatch = ifMatchUpdated('tenant_users')
  let query = db
    .updateTable('tenant_users')
    .set({ ...changes, updated: nextUpdated(changes.updated) })
    .where('tenant_id', '=', key.tenantId)
    .where('user_id', '=', key.userId)
    .where('status', '=', expected.status)
  if (expected.tokenHash !== undefined) {
    query =
      expected.tokenHash === null
        ? query.where('invitation_token_hash', 'is', null)
        : query.where('invitation_token_hash', '=', expected.tokenHash)
  }
  if (ifMatch) query = query.where('updated', '=', ifMatch)
  const result = await query.executeTakeFirst()
  if (result.numUpdatedRows > 0n) return 'updated'
  return ifMatch ? 'stale' : 'moved'
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
  first_name: string
  last_name: string
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
      'u.first_name',
      'u.last_name',
    ])
    .select(sql<boolean>`u.password_hash is not null`.as('has_password'))
    .select(sql<ExtensionRecord | null>`tu.extensions->0`.as('first_extension'))
    .where('tu.invitation_token_hash', '=', tokenHash)
    .executeTakeFirst()
}

/** Removes one membership (offboarding, docs/product.md#offboarding-and-erasure); false when there was none. */
export async function deleteMembership(db: Executor, tenantId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('tenant_users')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}
