import type { Kysely, Transaction } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { NewRow, RelationOf } from '../../db/row-inserts.js'
import type { Database, MembershipRow, MembershipStatus, OutboxStatus } from '../../db/schema.js'
import { joinPieces, type Piece, param, piece, raw } from '../../db/statement-pieces.js'
import { DEFAULT_WEBRTC } from './extensions.js'
import type { MembershipRecordRow } from './memberships.repository.js'
import type { ExtensionRecord } from './memberships.schemas.js'

/**
 * One membership row (table tenant_users) from one list of columns — its values, its INSERT, the record
 * it stores — for every statement that writes memberships: a new membership's through the write unit
 * (membership-write.ts, which SCIM's create extends with its SCIM row: scim/scim-user-writes.ts) and a
 * bulk load's multi-row insert (below).
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
  /** Accepted at once: the first extension becomes the active one (docs/product.md#memberships). */
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
export const DECIDED_COLUMNS = [
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
const MEMBERSHIP_COLUMN_NAMES = MEMBERSHIP_COLUMNS.map(([column]) => column)
export const MEMBERSHIP_COLUMN_LIST = raw(MEMBERSHIP_COLUMN_NAMES.join(', '))

/** The stored membership: what the request decided, and what the statement answered. */
export function newMembershipRecord(
  m: NewMembershipByEmail,
  answered: DecidedColumns & InviteeColumns,
  emailStatus: OutboxStatus | null,
): MembershipRecordRow {
  // Written accepted or not yet accepted: no acceptance time of its own (migration 0020).
  return {
    accepted_at: null,
    ...answered,
    ...requestColumns(m),
    role_name: m.roleName,
    email_status: emailStatus,
  }
}

/**
 * The one builder of a new tenant_users row: its values in MEMBERSHIP_COLUMNS' order. `userId` is an
 * expression — a parameter, or the column of the user the same statement looks up — because the default
 * webrtc extension's value is the user's id.
 */
export function membershipValues(m: NewMembershipRow, userId: Piece): Piece {
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
 * One membership as a row of the write unit (outbox/write-unit.ts), relation `membership`: of the user
 * `userId` names — a parameter, or the id of a look-up the row is selected `from` — answering the columns
 * the database decides.
 */
export function membershipRow(
  m: NewMembershipRow,
  userId: (relation: RelationOf) => Piece,
  from?: string,
): NewRow {
  return {
    as: 'membership',
    table: 'tenant_users',
    columns: MEMBERSHIP_COLUMN_NAMES,
    values: (relation) => membershipValues(m, userId(relation)),
    ...(from === undefined ? {} : { from }),
    returning: DECIDED_COLUMNS.join(', '),
    shape: membershipShape(m),
  }
}

export function membershipShape(m: NewMembershipRow): string {
  return `${m.extensions.defaultFirst ? 'd' : ''}${m.activateFirstExtension ? 'a' : ''}`
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
  const statement = piece`insert into tenant_users (${MEMBERSHIP_COLUMN_LIST}) values ${joinPieces(values)}`
  await withConstraintErrors(() => statement.sql().execute(db))
}
