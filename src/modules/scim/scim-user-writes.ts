import type { ServiceContext } from '../../context.js'
import { param, piece } from '../../db/statement-pieces.js'
import { type UnitInsert, writeUnit } from '../../outbox/write-unit.js'
import type { NewDirectoryMembership, NewMember } from '../memberships/directory-membership.js'
import { membershipWrite } from '../memberships/membership-write.js'
import type { MembershipRecordRow } from '../memberships/memberships.repository.js'
import { type NewScimUserRow, scimUserRow } from './scim-user-insert.js'

/**
 * SCIM's create of a person (docs/scim.md) through the write unit (docs/performance.md, "The write unit"):
 * a new person's platform user and `user.created`, its membership (accepted, or disabled for `active:
 * false`) and `membership.created`, and its SCIM row are one statement — the memberships module's write
 * (memberships/membership-write.ts) with the SCIM row added — batched with the creates that arrive
 * together, each answered and refused alone. The link of a platform user who exists is the same write
 * with the user looked up by e-mail: written together, or not at all.
 *
 * A taken e-mail of a new person is `email_taken` (the caller links that user instead); a userName or
 * e-mail another SCIM user of the tenant holds is `scim_user_name_taken` or `scim_email_taken`, a second
 * membership `already_member` — all 409 `uniqueness` in SCIM's terms (db/constraint-errors.ts).
 */

export interface ProvisionWrite {
  member: NewMember
  scim: NewScimUserRow
}

/** A link's write: the membership of the platform user with the membership's e-mail, and its SCIM row. */
export interface LinkWrite {
  member: NewDirectoryMembership
  /** The SCIM row; its user_id is the one the statement finds by e-mail. */
  scim: Omit<NewScimUserRow, 'user_id'>
}

/** The stored membership, and the SCIM row's version. */
export interface Provisioned {
  membership: MembershipRecordRow
  scimVersion: number
}

/** Writes a new person: its platform user, membership, SCIM row and their events, in one statement. */
export async function writeProvisionedUser(ctx: ServiceContext, write: ProvisionWrite): Promise<Provisioned> {
  const { member, scim } = write
  const userId = member.user.row.id
  const base = membershipWrite({ membership: member.membership, event: member.event, newUser: member.user })
  const row = scimUserRow(scim, () => param(userId, 'uuid'))
  const stored = await writeUnit(ctx).insert(withScimRow(base, row, scim))
  if (!stored) throw new Error('INSERT … RETURNING gave no row for a SCIM create')
  return stored
}

/**
 * Links the platform user with `member.membership.email`: its membership and `membership.created`, and its
 * SCIM row, in one statement. Undefined when no platform user has the e-mail (nothing written).
 */
export async function writeLinkedUser(
  ctx: ServiceContext,
  { member, scim }: LinkWrite,
): Promise<Provisioned | undefined> {
  const base = membershipWrite({ membership: member.membership, event: member.event })
  const row = scimUserRow(scim, (relation) => piece`${relation('membership')}.user_id`, 'membership')
  return writeUnit(ctx).insert(withScimRow(base, row, scim))
}

/**
 * A membership's write with the SCIM row after it: the same rows, look-ups and key, the SCIM row's version
 * in the answer, and what its SCIM keys' errors name (the userName, the e-mail).
 */
function withScimRow(
  base: UnitInsert<MembershipRecordRow | undefined>,
  row: ReturnType<typeof scimUserRow>,
  scim: Pick<NewScimUserRow, 'user_name' | 'email_key'>,
): UnitInsert<Provisioned | undefined> {
  return {
    ...base,
    kind: 'scim_user',
    rows: [...base.rows, row],
    answer: {
      from: [...base.answer.from, row.as],
      select: (relation) =>
        piece`${base.answer.select(relation)}, ${relation(row.as)}.version as scim_version`,
    },
    constraints: { ...base.constraints, userName: scim.user_name, email: scim.email_key ?? undefined },
    read: (answered) => {
      if (!answered) return undefined
      const { scim_version, ...membershipColumns } = answered
      const membership = base.read(membershipColumns)
      return membership && { membership, scimVersion: scim_version as number }
    },
  }
}
