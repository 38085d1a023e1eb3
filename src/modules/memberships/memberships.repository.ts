import { type Kysely, type RawBuilder, sql, type Transaction, type Updateable } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import { nextUpdated } from '../../db/row-version.js'
import type {
  Database,
  MembershipRow,
  MembershipStatus,
  MembershipsTable,
  OutboxStatus,
} from '../../db/schema.js'
import { copyName, copySuffix } from '../../db/statement-batcher.js'
import { statementTexts } from '../../db/statement-texts.js'
import { type CounterWindow, type CountInStatement, counterWindow } from '../../http/rate-limit.js'
import { ifMatchUpdated } from '../../http/request-context.js'
import {
  INVITATION_EMAIL,
  insertOutboxRowFrom,
  type NewOutboxRow,
  outboxRowParameters,
} from '../../outbox/outbox.repository.js'
import {
  type AuditEvent,
  type AuditForm,
  auditEventCtes,
  auditParameters,
  executeAudited,
} from '../audit/audit.repository.js'
import { DEFAULT_WEBRTC } from './extensions.js'
import type { ExtensionRecord } from './memberships.schemas.js'

/** SQL for memberships (table tenant_users). Each function takes the executor (db or transaction) first. */

type Executor = Kysely<Database> | Transaction<Database>

export interface MembershipRecordRow extends MembershipRow {
  email: string
  first_name: string
  last_name: string
  external_id: string
  platform_status: string
  role_name: string | null
  email_status: OutboxStatus | null
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
}

/** A new membership: what the request decided. */
export interface NewMembershipRow {
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

/** A new membership of the user with some e-mail; the user's id is the database's. */
export interface NewMembershipByEmail extends NewMembershipRow {
  email: string
  /** The role's name, for the record the insert answers with (the caller has the role at hand). */
  roleName: string
}

const MEMBERSHIP_COLUMNS = sql.raw(
  'tenant_id, user_id, role_id, status, no_password, default_identity_provider, invitation_expiry_date, ' +
    'invitation_token_hash, invited_by, extension, extensions, active_extension, work_station_id, ' +
    'created, created_by, updated, updated_by',
)

/**
 * The columns of a new membership that the database decides: the user's id (looked up by e-mail), what
 * membershipValues derives from it, and the columns left to their defaults. The invitation's statement
 * returns only these; the rest of the record is what the request decided (requestColumns). Every column
 * returned is work for both ends — PostgreSQL builds the row for each node of the plan that passes it on,
 * and pg parses each value — and the full row cost ~9 % of the statement (docs/performance.md).
 */
const DECIDED_COLUMNS = [
  'user_id',
  'state',
  'extension',
  'extensions',
  'active_extension',
  'supervisor_id',
  'capacity_rule_id',
  'session_started',
  'session_reason',
  'client_log_level',
  'invitation_expiry_announced',
] as const satisfies readonly (keyof MembershipRow)[]
type DecidedColumns = Pick<MembershipRow, (typeof DECIDED_COLUMNS)[number]>

/** The invitee's columns in a membership's record. */
type InviteeColumns = Pick<
  MembershipRecordRow,
  'email' | 'first_name' | 'last_name' | 'external_id' | 'platform_status'
>

/**
 * The columns of a new membership that the request decides, by column: the one mapping from a
 * NewMembershipRow to the row, which membershipValues and membershipParameters place in the statement and
 * newMembershipRecord puts in the record the insert answers with.
 */
function requestColumns(m: NewMembershipRow) {
  return {
    tenant_id: m.tenantId,
    role_id: m.roleId,
    status: m.status,
    no_password: m.noPassword,
    default_identity_provider: m.defaultIdentityProvider,
    invitation_expiry_date: m.invitation?.expiresAt ?? null,
    invitation_token_hash: m.invitation?.tokenHash ?? null,
    invited_by: m.invitation?.invitedBy ?? null,
    work_station_id: m.workStationId,
    created: m.now,
    created_by: m.actorId,
    updated: m.now,
    updated_by: m.actorId,
  } satisfies Partial<MembershipRow>
}

/** The stored membership: what the request decided, and what the statement answered. */
function newMembershipRecord(
  m: NewMembershipByEmail,
  answered: DecidedColumns & InviteeColumns,
  emailStatus: OutboxStatus | null,
): MembershipRecordRow {
  return { ...answered, ...requestColumns(m), role_name: m.roleName, email_status: emailStatus }
}

/**
 * The one builder of a new tenant_users row: its values in MEMBERSHIP_COLUMNS' order, as SQL. `userId` is
 * an expression — a parameter, or the column of the user the same statement looks up — because the default
 * webrtc extension's value is the user's id.
 */
function membershipValues(m: NewMembershipRow, userId: RawBuilder<unknown>): RawBuilder<unknown> {
  const { given, defaultFirst } = m.extensions
  const defaultExtension = sql`(${JSON.stringify(DEFAULT_WEBRTC)}::jsonb || jsonb_build_object('value', ${userId}::text))`
  const extensions = defaultFirst
    ? sql`jsonb_build_array(${defaultExtension}) || ${JSON.stringify(given)}::jsonb`
    : sql`${JSON.stringify(given)}::jsonb`
  const extension = defaultFirst ? sql`${userId}::text` : sql`${given[0]?.value ?? ''}::text`
  const active = !m.activateFirstExtension
    ? sql`null::jsonb`
    : defaultFirst
      ? defaultExtension
      : sql`${JSON.stringify(given[0] ?? null)}::jsonb`
  const c = requestColumns(m)
  return sql`${c.tenant_id}::uuid, ${userId}, ${c.role_id}::uuid, ${c.status}::text, ${c.no_password}::boolean,
    ${c.default_identity_provider}::uuid, ${c.invitation_expiry_date}::timestamptz,
    ${c.invitation_token_hash}::text, ${c.invited_by}::uuid,
    ${extension}, ${extensions}, ${active}, ${c.work_station_id}::text,
    ${c.created}::timestamptz, ${c.created_by}::uuid, ${c.updated}::timestamptz, ${c.updated_by}::uuid`
}

/**
 * The parameters of membershipValues, in the order it places them (db/statement-texts.ts); `userId` is
 * what its `userId` expression holds (none for a column).
 */
function membershipParameters(m: NewMembershipRow, userId: readonly unknown[]): unknown[] {
  const { given, defaultFirst } = m.extensions
  const defaultExtension = [JSON.stringify(DEFAULT_WEBRTC), ...userId]
  const extensions = defaultFirst ? [...defaultExtension, JSON.stringify(given)] : [JSON.stringify(given)]
  const extension = defaultFirst ? userId : [given[0]?.value ?? '']
  const active = !m.activateFirstExtension
    ? []
    : defaultFirst
      ? defaultExtension
      : [JSON.stringify(given[0] ?? null)]
  const c = requestColumns(m)
  return [
    c.tenant_id,
    ...userId,
    c.role_id,
    c.status,
    c.no_password,
    c.default_identity_provider,
    c.invitation_expiry_date,
    c.invitation_token_hash,
    c.invited_by,
    ...extension,
    ...extensions,
    ...active,
    c.work_station_id,
    c.created,
    c.created_by,
    c.updated,
    c.updated_by,
  ]
}

/** Which variant of membershipValues' text a row needs. */
function membershipShape(m: NewMembershipRow): string {
  return `${m.extensions.defaultFirst ? 'd' : ''}${m.activateFirstExtension ? 'a' : ''}`
}

/** One invitation's write: the membership, its event and, for an `invited` one, its mail and its count. */
export interface InvitationWrite {
  membership: NewMembershipByEmail
  event: AuditEvent
  mail?: NewOutboxRow
  /** The invitee's mail limit, counted in the database (invitation-limits.ts). */
  mailCount?: CountInStatement
}

/** What an invitation's statement answered for one write: the stored record (none: no such user). */
export interface InvitationOutcome {
  stored?: MembershipRecordRow
  mailCount?: CounterWindow
}

/**
 * Which text a write needs: writes of one shape can share a statement (invitation-writes.ts). The text
 * depends on the optional parts only, never on the values.
 */
export function invitationShape(write: InvitationWrite): string {
  return `${write.mailCount ? 'c' : ''}${write.mail ? 'm' : ''}\u0000${membershipShape(write.membership)}`
}

/**
 * Inserts the membership of the user with `m.email`, its audit event (target: the user's id) and, for an
 * invitation, its e-mail's outbox row (its payload completed with the user's id) — one statement: one
 * round trip, atomic without a transaction, and the user look-up in it. Answers the stored record, or
 * none when no user has the e-mail (nothing is written). A second membership of the same user in a
 * tenant is 409 already_member.
 *
 * With `mailCount` (the invitee's mail limit, counted in the database) the statement also counts the
 * e-mail and writes nothing past the limit; it answers the count, for the caller to judge.
 *
 * Several writes of one shape (invitationShape) go in one statement, one copy of the write each, its CTEs
 * named by its place (`invitee_1`, `membership_1` …): the statement is one transaction, so they commit
 * together or not at all (invitation-writes.ts runs each again alone when a batch fails). The answer has
 * one outcome per write, in their order.
 *
 * Hand-written SQL rather than Kysely's builder: it is the hot path of every invitation. Its text is one
 * of a few (form × optional parts × number of copies), built once each and then reused with the
 * request's parameters, so neither this process nor PostgreSQL (named prepared statements) does that
 * work again.
 */
export async function insertMembershipsByEmail(
  db: Executor,
  writes: readonly InvitationWrite[],
): Promise<InvitationOutcome[]> {
  const first = writes[0]
  if (!first) return []
  const eventSource = (k: number) => ({ relation: copyName('membership', k), targetIdColumn: 'user_id' })
  const build = (form: AuditForm) => {
    const copies = writes.map(({ membership: m, event, mail, mailCount }, k) => {
      const { invitee, membership, count } = copyRelations(k)
      const queueMail = mail
        ? sql`, ${sql.raw(copyName('mail', k))} as (${insertOutboxRowFrom(mail, copyName('membership', k), sql`jsonb_build_object('userId', ${membership}.user_id)`)})`
        : sql``
      return sql`
      ${mailCount ? sql`${count} as (${mailCount.statement()}),` : sql``}
      ${invitee} as (
        select id, email, first_name, last_name, external_id, status from users where email = ${m.email}::text),
      ${membership} as (
        insert into tenant_users (${MEMBERSHIP_COLUMNS})
        select ${membershipValues(m, sql`${invitee}.id`)}
        from ${invitee}
        ${mailCount ? sql`where (select count from ${count}) <= ${mailCount.limit}::int` : sql``}
        returning ${sql.raw(DECIDED_COLUMNS.join(', '))})${queueMail},
      ${auditEventCtes(event, eventSource(k), form, copySuffix(k))}`
    })
    const answers = writes.map(({ mailCount }, k) => {
      const { invitee, membership, count } = copyRelations(k)
      const record = sql`${sql.lit(k)}::int as copy, ${membership}.*, ${invitee}.email, ${invitee}.first_name,
        ${invitee}.last_name, ${invitee}.external_id, ${invitee}.status as platform_status`
      return mailCount
        ? // The count comes back even when nothing was written.
          sql`select ${record}, ${count}.count as mail_count, ${count}.reset_at as mail_reset_at
            from ${count} left join (${membership} cross join ${invitee}) on true`
        : sql`select ${record} from ${membership} cross join ${invitee}`
    })
    return sql<InvitedRow>`with ${sql.join(copies)} ${sql.join(answers, sql` union all `)}`.compile(db)
  }
  const statement = (form: AuditForm) =>
    statementTexts.compile(
      `invitation\u0000${form}\u0000${invitationShape(first)}\u0000${writes.length}`,
      writes.flatMap(({ membership: m, event, mail, mailCount }, k) => [
        ...(mailCount?.parameters ?? []),
        m.email,
        ...membershipParameters(m, []),
        ...(mailCount ? [mailCount.limit] : []),
        ...(mail ? outboxRowParameters(mail) : []),
        ...auditParameters(event, eventSource(k), form),
      ]),
      () => build(form),
    )
  const { rows } = await withConstraintErrors(() => executeAudited(db, statement))
  const byCopy = new Map(rows.map((row) => [row.copy, row]))
  return writes.map(({ membership: m, mail }, k) => {
    const row = byCopy.get(k)
    if (!row) return {}
    const { copy: _copy, mail_count, mail_reset_at, ...answered } = row
    return {
      ...(answered.user_id ? { stored: newMembershipRecord(m, answered, mail ? 'queued' : null) } : {}),
      ...(mail_count !== undefined && mail_reset_at !== undefined
        ? { mailCount: counterWindow({ count: mail_count, reset_at: mail_reset_at }) }
        : {}),
    }
  })
}

/** The CTEs of copy `k` that its answer reads as well as its writes. */
function copyRelations(k: number) {
  return {
    invitee: sql.raw(copyName('invitee', k)),
    membership: sql.raw(copyName('membership', k)),
    count: sql.raw(copyName('mail_count', k)),
  }
}

/**
 * What the invitation's statement answers for each copy: which copy, the columns the database decided,
 * the invitee and, when it counted, the mail count.
 */
type InvitedRow = DecidedColumns &
  InviteeColumns & { copy: number; mail_count?: number; mail_reset_at?: Date }

/** Whether the invitation's statement text is reused (for the test that holds it to that). */
export function isReusedInvitationShape(): boolean {
  return statementTexts.reuses('invitation\u0000')
}

/**
 * The memberships of users whose ids are known (a bulk load's batch, inside its transaction): one
 * multi-row INSERT, each row built as insertMembershipByEmail builds its one.
 */
export async function insertMemberships(
  db: Executor,
  rows: readonly { userId: string; membership: NewMembershipRow }[],
): Promise<void> {
  if (rows.length === 0) return
  const values = rows.map(
    ({ userId, membership }) => sql`(${membershipValues(membership, sql`${userId}::uuid`)})`,
  )
  await withConstraintErrors(() =>
    sql`insert into tenant_users (${MEMBERSHIP_COLUMNS}) values ${sql.join(values)}`.execute(db),
  )
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

export async function listMembershipRows(
  db: Executor,
  tenantId: string,
  page: {
    afterUserId?: string | undefined
    limit?: number | undefined
    status?: MembershipStatus | undefined
  },
): Promise<MembershipRecordRow[]> {
  let query = selectMemberships(db).where('tu.tenant_id', '=', tenantId).orderBy('tu.user_id')
  if (page.status !== undefined) query = query.where('tu.status', '=', page.status)
  if (page.afterUserId) query = query.where('tu.user_id', '>', page.afterUserId)
  if (page.limit !== undefined) query = query.limit(page.limit + 1)
  return query.execute()
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
