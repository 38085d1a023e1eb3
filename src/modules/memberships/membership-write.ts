import type { NewUserRow } from '../../db/schema.js'
import { type Piece, param, piece } from '../../db/statement-pieces.js'
import type { CountedLimit } from '../../http/rate-limit.js'
import type { AuditEvent } from '../../outbox/audit-event.js'
import type { NewOutboxRow } from '../../outbox/outbox.repository.js'
import type { LookUp, UnitInsert, UnitRow } from '../../outbox/write-unit.js'
import { newUserRow } from '../users/users.repository.js'
import {
  type DecidedColumns,
  type InviteeColumns,
  membershipRow,
  type NewMembershipByEmail,
  newMembershipRecord,
} from './membership-insert.js'
import type { MembershipRecordRow } from './memberships.repository.js'

/**
 * A new membership as the write unit writes it (outbox/write-unit.ts), in one statement: the membership
 * (membership-insert.ts) and its event; for an invitation, its mail — the user's id filled in by the
 * statement — and the invitee's mail limit; and, when the person is new, the platform user and its
 * `user.created` event.
 */
export interface NewMembershipWrite {
  membership: NewMembershipByEmail
  event: AuditEvent
  /** A platform user created with the membership. */
  newUser?: { row: NewUserRow; event: AuditEvent } | undefined
  mail?: NewOutboxRow | undefined
  /** Invitation e-mails to the invitee (invitation-limits.ts). */
  mailLimit?: CountedLimit | undefined
}

/**
 * The unit's write of a new membership, answering the stored record — or none when no platform user has
 * the e-mail (nothing is written). The user is looked up by e-mail in the statement itself; a new user's
 * id is the row's. Two writes of one e-mail never share a statement: they would count the invitee's mail
 * in one counter row, which one statement cannot update twice. A second membership of a user in a tenant
 * is 409 already_member, a taken e-mail for a new user 409 email_taken.
 */
export function membershipWrite(write: NewMembershipWrite): UnitInsert<MembershipRecordRow | undefined> {
  const { membership: m, event, newUser, mail, mailLimit } = write
  const emailStatus = mail ? 'queued' : null
  const common = {
    kind: 'invitation',
    ...(mail ? { mail: { row: mail, follows: 'membership', payload: { userId: 'user_id' } } } : {}),
    ...(mailLimit ? { countLimit: mailLimit } : {}),
    uniqueKey: m.email,
    constraints: { email: m.email },
  }
  // The event's target is the user's id, which the statement decides.
  const audit = { event, targetIdColumn: 'user_id' }
  if (newUser) {
    const user = newUser.row
    const rows: UnitRow[] = [
      newUserRow(user, newUser.event),
      { ...membershipRow(m, () => param(user.id, 'uuid')), audit },
    ]
    const invitee: InviteeColumns = {
      email: user.email,
      first_name: user.first_name ?? '',
      last_name: user.last_name ?? '',
      external_id: user.external_id ?? '',
      platform_status: user.status ?? 'enabled',
    }
    return {
      ...common,
      rows,
      answer: { from: ['membership'], select: (relation) => piece`${relation('membership')}.*` },
      read: (row) =>
        row?.user_id
          ? // A person created with the membership has no second factor yet.
            {
              ...newMembershipRecord(m, { ...(row as DecidedColumns), ...invitee }, emailStatus),
              has_factor: false,
            }
          : undefined,
    }
  }
  return {
    ...common,
    lookUps: [inviteeByEmail(m.email)],
    rows: [{ ...membershipRow(m, (relation) => piece`${relation('invitee')}.id`, 'invitee'), audit }],
    answer: {
      from: ['membership', 'invitee'],
      select: (relation) => {
        const invitee = relation('invitee')
        return piece`${relation('membership')}.*, ${invitee}.email, ${invitee}.first_name, ${invitee}.last_name,
          ${invitee}.external_id, ${invitee}.status as platform_status, ${hasFactor(invitee)} as has_factor`
      },
    },
    // With a count, the answer comes back even when nothing was written: then it holds no user.
    read: (row) =>
      row?.user_id ? newMembershipRecord(m, row as DecidedColumns & InviteeColumns, emailStatus) : undefined,
  }
}

/** Whether the invitee has a second factor (an active TOTP or passkey), for the member's `mfa`. */
function hasFactor(invitee: Piece): Piece {
  return piece`exists (select 1 from user_factors f where f.user_id = ${invitee}.id and f.status = 'active'
          and f.type in ('totp', 'webauthn'))`
}

/** The platform user with the e-mail, looked up by the statement that writes its membership. */
function inviteeByEmail(email: string): LookUp {
  return {
    as: 'invitee',
    select: piece`select id, email, first_name, last_name, external_id, status from users where email = ${param(email, 'text')}`,
  }
}
