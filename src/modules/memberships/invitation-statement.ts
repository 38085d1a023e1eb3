import type { Kysely, Transaction } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { Database, MembershipRow, MembershipStatus, OutboxStatus } from '../../db/schema.js'
import { copyName, copySuffix } from '../../db/statement-batcher.js'
import { joinPieces, NOTHING, type Piece, param, piece, raw } from '../../db/statement-pieces.js'
import { statementTexts } from '../../db/statement-texts.js'
import { type CounterWindow, type CountInStatement, counterWindow } from '../../http/rate-limit.js'
import { insertOutboxRowFrom, type NewOutboxRow } from '../../outbox/outbox.repository.js'
import { type AuditEvent, type AuditForm, auditEventCtes, executeAudited } from '../audit/audit.repository.js'
import { DEFAULT_WEBRTC } from './extensions.js'
import type { MembershipRecordRow } from './memberships.repository.js'
import type { ExtensionRecord } from './memberships.schemas.js'

/**
 * The statements that insert memberships (table tenant_users): an invitation's one statement — the
 * membership, its event and its mail, several invitations in one when they arrive together — and a bulk
 * load's multi-row insert. Both build each row with membershipValues, from one list of columns.
 */

type Executor = Kysely<Database> | Transaction<Database>

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

/**
 * The columns of a new membership that the database decides: the user's id (looked up by e-mail), what
 * membershipValues derives from it, and the columns left to their defaults. The invitation's statement
 * returns only these; the rest of the record is what the request decided (requestColumns). Every column
 * returned is work for both ends, and the full row cost ~9 % of the statement (docs/performance.md).
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
export type DecidedColumns = Pick<MembershipRow, (typeof DECIDED_COLUMNS)[number]>

/** The invitee's columns in a membership's record. */
export type InviteeColumns = Pick<
  MembershipRecordRow,
  'email' | 'first_name' | 'last_name' | 'external_id' | 'platform_status'
>

/**
 * The columns of a new membership that the request decides, with their SQL types: the one mapping from a
 * NewMembershipRow to the row, which membershipValues places in the statement and newMembershipRecord
 * puts in the record the insert answers with.
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
type RequestColumn = keyof ReturnType<typeof requestColumns>

/**
 * Every column of a new tenant_users row, in insert order: a request column with its SQL type, or one
 * that membershipValues derives from the user's id and the extensions.
 */
const MEMBERSHIP_COLUMNS = [
  ['tenant_id', 'uuid'],
  ['user_id', 'derived'],
  ['role_id', 'uuid'],
  ['status', 'text'],
  ['no_password', 'boolean'],
  ['default_identity_provider', 'uuid'],
  ['invitation_expiry_date', 'timestamptz'],
  ['invitation_token_hash', 'text'],
  ['invited_by', 'uuid'],
  ['extension', 'derived'],
  ['extensions', 'derived'],
  ['active_extension', 'derived'],
  ['work_station_id', 'text'],
  ['created', 'timestamptz'],
  ['created_by', 'uuid'],
  ['updated', 'timestamptz'],
  ['updated_by', 'uuid'],
] as const satisfies readonly (readonly [RequestColumn, string] | readonly [string, 'derived'])[]
const COLUMN_LIST = raw(MEMBERSHIP_COLUMNS.map(([column]) => column).join(', '))

/** The stored membership: what the request decided, and what the statement answered. */
export function newMembershipRecord(
  m: NewMembershipByEmail,
  answered: DecidedColumns & InviteeColumns,
  emailStatus: OutboxStatus | null,
): MembershipRecordRow {
  return { ...answered, ...requestColumns(m), role_name: m.roleName, email_status: emailStatus }
}

/**
 * The one builder of a new tenant_users row: its values in MEMBERSHIP_COLUMNS' order. `userId` is an
 * expression — a parameter, or the column of the user the same statement looks up — because the default
 * webrtc extension's value is the user's id.
 */
function membershipValues(m: NewMembershipRow, userId: Piece): Piece {
  const { given, defaultFirst } = m.extensions
  const defaultExtension = piece`(${param(JSON.stringify(DEFAULT_WEBRTC), 'jsonb')} || jsonb_build_object('value', ${userId}::text))`
  const derived = {
    user_id: userId,
    extension: defaultFirst ? piece`${userId}::text` : param(given[0]?.value ?? '', 'text'),
    extensions: defaultFirst
      ? piece`jsonb_build_array(${defaultExtension}) || ${param(JSON.stringify(given), 'jsonb')}`
      : param(JSON.stringify(given), 'jsonb'),
    active_extension: !m.activateFirstExtension
      ? raw('null::jsonb')
      : defaultFirst
        ? defaultExtension
        : param(JSON.stringify(given[0] ?? null), 'jsonb'),
  }
  const c = requestColumns(m)
  return joinPieces(
    MEMBERSHIP_COLUMNS.map(([column, type]) =>
      type === 'derived' ? derived[column] : param(c[column], type),
    ),
  )
}

/**
 * The insert of one membership of the user `userId` (an expression), answering the columns the database
 * decides: for a statement that writes the user's other rows with it (SCIM's create,
 * scim/scim-user-statement.ts). `membershipShape` is what its text depends on.
 */
export function membershipInsert(m: NewMembershipRow, userId: Piece): Piece {
  return piece`insert into tenant_users (${COLUMN_LIST}) values (${membershipValues(m, userId)})
    returning ${raw(DECIDED_COLUMNS.join(', '))}`
}

export function membershipShape(m: NewMembershipRow): string {
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
 * request's parameters (db/statement-texts.ts).
 */
export async function insertMembershipsByEmail(
  db: Executor,
  writes: readonly InvitationWrite[],
): Promise<InvitationOutcome[]> {
  const first = writes[0]
  if (!first) return []
  const statement = (form: AuditForm) => {
    const copies = writes.map(({ membership: m, event, mail, mailCount }, k) => {
      const { invitee, membership, count } = copyRelations(k)
      const counted = mailCount ? piece`${count} as (${mailCount}),` : NOTHING
      const queueMail = mail
        ? piece`, ${raw(copyName('mail', k))} as (${insertOutboxRowFrom(mail, copyName('membership', k), raw(`jsonb_build_object('userId', ${copyName('membership', k)}.user_id)`))})`
        : NOTHING
      const underLimit = mailCount
        ? piece`where (select count from ${count}) <= ${param(mailCount.limit, 'int')}`
        : NOTHING
      const eventSource = { relation: copyName('membership', k), targetIdColumn: 'user_id' }
      return piece`
      ${counted}
      ${invitee} as (
        select id, email, first_name, last_name, external_id, status from users where email = ${param(m.email, 'text')}),
      ${membership} as (
        insert into tenant_users (${COLUMN_LIST})
        select ${membershipValues(m, piece`${invitee}.id`)}
        from ${invitee}
        ${underLimit}
        returning ${raw(DECIDED_COLUMNS.join(', '))})${queueMail},
      ${auditEventCtes(event, eventSource, form, copySuffix(k))}`
    })
    const answers = writes.map(({ mailCount }, k) => {
      const { invitee, membership, count } = copyRelations(k)
      const record = piece`${raw(String(k))}::int as copy, ${membership}.*, ${invitee}.email, ${invitee}.first_name,
        ${invitee}.last_name, ${invitee}.external_id, ${invitee}.status as platform_status`
      return mailCount
        ? // The count comes back even when nothing was written.
          piece`select ${record}, ${count}.count as mail_count, ${count}.reset_at as mail_reset_at
            from ${count} left join (${membership} cross join ${invitee}) on true`
        : piece`select ${record} from ${membership} cross join ${invitee}`
    })
    const whole = piece`with ${joinPieces(copies)} ${joinPieces(answers, ' union all ')}`
    return statementTexts.compile<InvitedRow>(
      `invitation\u0000${form}\u0000${invitationShape(first)}\u0000${writes.length}`,
      whole.parameters,
      () => whole.sql().compile(db) as never,
    )
  }
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
    invitee: raw(copyName('invitee', k)),
    membership: raw(copyName('membership', k)),
    count: raw(copyName('mail_count', k)),
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
 * multi-row INSERT, each row built as an invitation's statement builds its one.
 */
export async function insertMemberships(
  db: Executor,
  rows: readonly { userId: string; membership: NewMembershipRow }[],
): Promise<void> {
  if (rows.length === 0) return
  const values = rows.map(
    ({ userId, membership }) => piece`(${membershipValues(membership, param(userId, 'uuid'))})`,
  )
  const statement = piece`insert into tenant_users (${COLUMN_LIST}) values ${joinPieces(values)}`
  await withConstraintErrors(() => statement.sql().execute(db))
}
