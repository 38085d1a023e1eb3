import type { Kysely, Transaction } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { Database } from '../../db/schema.js'
import { copyName, copySuffix } from '../../db/statement-batcher.js'
import { joinPieces, NOTHING, param, piece, raw } from '../../db/statement-pieces.js'
import { statementTexts } from '../../db/statement-texts.js'
import { type CounterWindow, type CountInStatement, counterWindow } from '../../http/rate-limit.js'
import { insertOutboxRowFrom, type NewOutboxRow } from '../../outbox/outbox.repository.js'
import { type AuditEvent, type AuditForm, auditEventCtes, executeAudited } from '../audit/audit.repository.js'
import {
  DECIDED_COLUMNS,
  type DecidedColumns,
  type InviteeColumns,
  MEMBERSHIP_COLUMN_LIST,
  membershipShape,
  membershipValues,
  type NewMembershipByEmail,
  newMembershipRecord,
} from './membership-insert.js'
import type { MembershipRecordRow } from './memberships.repository.js'

/**
 * An invitation's one statement: the membership (its row from membership-insert.ts), its event and its
 * mail — several invitations in one when they arrive together.
 */

type Executor = Kysely<Database> | Transaction<Database>

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
        insert into tenant_users (${MEMBERSHIP_COLUMN_LIST})
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
