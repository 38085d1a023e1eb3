import type { Kysely, Selectable } from 'kysely'
import type { Database, ScimUsersTable } from '../../db/schema.js'
import { copyName, copySuffix } from '../../db/statement-batcher.js'
import { joinPieces, type Piece, param, piece, raw } from '../../db/statement-pieces.js'
import { statementTexts } from '../../db/statement-texts.js'
import { auditEventCtes, auditedInsertCtes, auditedRowShape } from '../../outbox/audited-statement.js'
import { type AuditForm, executeAudited } from '../../outbox/webhook-fan-out.js'
import type { NewDirectoryMembership, NewMember } from '../memberships/directory-membership.js'
import {
  DECIDED_COLUMNS,
  type DecidedColumns,
  type InviteeColumns,
  MEMBERSHIP_COLUMN_LIST,
  membershipInsert,
  membershipShape,
  membershipValues,
  newMembershipRecord,
} from '../memberships/membership-insert.js'
import type { MembershipRecordRow } from '../memberships/memberships.repository.js'

/**
 * SCIM's create of a new person (API.md §16) as one statement: the platform user and its `user.created`
 * event, the membership (accepted, or disabled for `active: false`) and its `membership.created` event,
 * and the SCIM row — one round trip, atomic without a transaction, as an invitation is (docs/performance.md,
 * "SCIM creates and reads"). Where it had four transactions and a dozen statements, a half-done create
 * can no longer be left behind. The link of a platform user who exists is one statement too
 * (insertLinkedUser): its membership, its event and its SCIM row.
 */

/** The SCIM row of a new user, as stored (its version is the column's default). */
export type NewScimUserRow = Pick<
  Selectable<ScimUsersTable>,
  | 'tenant_id'
  | 'user_id'
  | 'user_name'
  | 'user_name_key'
  | 'email_key'
  | 'external_id'
  | 'active'
  | 'provisioned'
  | 'created'
  | 'updated'
> & {
  /** The resource as the directory sent it, as JSON text. */
  attributes: string
}

export interface ProvisionWrite {
  member: NewMember
  scim: NewScimUserRow
}

/** The stored membership, and the SCIM row's version. */
export interface Provisioned {
  membership: MembershipRecordRow
  scimVersion: number
}

/** The SCIM row's columns and their SQL types, in insert order. */
const SCIM_COLUMNS = [
  ['tenant_id', 'uuid'],
  ['user_id', 'uuid'],
  ['user_name', 'text'],
  ['user_name_key', 'text'],
  ['email_key', 'text'],
  ['external_id', 'text'],
  ['active', 'boolean'],
  ['attributes', 'jsonb'],
  ['provisioned', 'boolean'],
  ['created', 'timestamptz'],
  ['updated', 'timestamptz'],
] as const satisfies readonly (readonly [keyof NewScimUserRow, string])[]
const SCIM_COLUMN_LIST = raw(SCIM_COLUMNS.map(([column]) => column).join(', '))

/** The SCIM row's values in SCIM_COLUMNS' order; `userId` an expression (a parameter, or a CTE's column). */
function scimValues(scim: Omit<NewScimUserRow, 'user_id'>, userId: Piece): Piece {
  return joinPieces(
    SCIM_COLUMNS.map(([column, type]) => (column === 'user_id' ? userId : param(scim[column], type))),
  )
}

/** Which text a write needs: writes of one shape can share a statement (db/statement-batcher.ts). */
export function provisionShape({ member }: ProvisionWrite): string {
  return `${auditedRowShape(member.user)}\u0000${membershipShape(member.membership)}`
}

/**
 * Writes each new person (several of one shape in one statement, one copy each, its CTEs named by its
 * place) and answers them in order. A taken e-mail fails the statement on users_email_key, a taken
 * userName or e-mail among the tenant's SCIM users on scim_users' unique keys; nothing is written then.
 */
export async function insertProvisionedUsers(
  db: Kysely<Database>,
  writes: readonly ProvisionWrite[],
): Promise<Provisioned[]> {
  const first = writes[0]
  if (!first) return []
  const statement = (form: AuditForm) => {
    const copies = writes.map(({ member, scim }, k) => {
      const membership = raw(copyName('membership', k))
      const userId = param(member.user.row.id, 'uuid')
      return piece`
      ${auditedInsertCtes('users', 'id', member.user, copyName('new_user', k), form, `_u${copySuffix(k)}`)},
      ${membership} as (${membershipInsert(member.membership, userId)}),
      ${auditEventCtes(member.event, { relation: copyName('membership', k) }, form, `_m${copySuffix(k)}`)},
      ${raw(copyName('scim_user', k))} as (
        insert into scim_users (${SCIM_COLUMN_LIST}) values (${scimValues(scim, userId)}) returning version)`
    })
    const answers = writes.map(
      (_, k) =>
        piece`select ${raw(String(k))}::int as copy, ${raw(copyName('membership', k))}.*,
          ${raw(copyName('scim_user', k))}.version as scim_version
        from ${raw(copyName('membership', k))} cross join ${raw(copyName('scim_user', k))}`,
    )
    const whole = piece`with ${joinPieces(copies)} ${joinPieces(answers, ' union all ')}`
    return statementTexts.compile<ProvisionedRow>(
      `scim user\u0000${form}\u0000${provisionShape(first)}\u0000${writes.length}`,
      whole.parameters,
      () => whole.sql().compile(db) as never,
    )
  }
  const { rows } = await executeAudited(db, statement)
  const byCopy = new Map(rows.map((row) => [row.copy, row]))
  return writes.map(({ member }, k) => {
    const row = byCopy.get(k)
    if (!row) throw new Error(`INSERT … RETURNING gave no row for copy ${k}`)
    const { copy: _copy, scim_version, ...decided } = row
    const user = member.user.row
    const invitee = {
      email: user.email,
      first_name: user.first_name ?? '',
      last_name: user.last_name ?? '',
      external_id: user.external_id ?? '',
      platform_status: user.status,
    }
    return {
      membership: newMembershipRecord(member.membership, { ...decided, ...invitee }, null),
      scimVersion: scim_version,
    }
  })
}

type ProvisionedRow = DecidedColumns & { copy: number; scim_version: number }

/** Whether the statement's text is reused (for the test that holds the create to it). */
export function isReusedProvisionShape(): boolean {
  return statementTexts.reuses('scim user\u0000')
}

/** A link's write: the membership of the platform user with the membership's e-mail, and its SCIM row. */
export interface LinkWrite {
  member: NewDirectoryMembership
  /** The SCIM row; its user_id is the one the statement finds by e-mail. */
  scim: Omit<NewScimUserRow, 'user_id'>
}

/**
 * Links the platform user with `member.membership.email` (docs/scim.md: linked, when not a member) in
 * one statement: the user looked up, its membership and `membership.created`, and its SCIM row — written
 * together or not at all, as a new person's create is. Answers the stored membership and the SCIM row's
 * version, or undefined when no platform user has the e-mail (nothing written). A second membership fails
 * on tenant_users_pkey, a taken userName or e-mail among the tenant's SCIM users on scim_users' unique keys.
 */
export async function insertLinkedUser(
  db: Kysely<Database>,
  { member, scim }: LinkWrite,
): Promise<Provisioned | undefined> {
  const m = member.membership
  const statement = (form: AuditForm) => {
    const whole = piece`with
      invitee as (
        select id, email, first_name, last_name, external_id, status from users where email = ${param(m.email, 'text')}),
      membership as (
        insert into tenant_users (${MEMBERSHIP_COLUMN_LIST})
        select ${membershipValues(m, raw('invitee.id'))} from invitee
        returning ${raw(DECIDED_COLUMNS.join(', '))}),
      ${auditEventCtes(member.event, { relation: 'membership', targetIdColumn: 'user_id' }, form)},
      scim_user as (
        insert into scim_users (${SCIM_COLUMN_LIST})
        select ${scimValues(scim, raw('membership.user_id'))} from membership
        returning version)
      select membership.*, invitee.email, invitee.first_name, invitee.last_name, invitee.external_id,
        invitee.status as platform_status, scim_user.version as scim_version
      from membership cross join invitee cross join scim_user`
    return statementTexts.compile<LinkedRow>(
      `scim link\u0000${form}\u0000${membershipShape(m)}`,
      whole.parameters,
      () => whole.sql().compile(db) as never,
    )
  }
  const [row] = (await executeAudited(db, statement)).rows
  if (!row) return undefined
  const { scim_version, ...answered } = row
  return { membership: newMembershipRecord(m, answered, null), scimVersion: scim_version }
}

type LinkedRow = DecidedColumns & InviteeColumns & { scim_version: number }
