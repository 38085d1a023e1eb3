import type { MembershipStatus } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import type { InvitationStatus } from './memberships.schemas.js'

/**
 * The invitation state machine of a membership (docs/product.md#invitations, docs/api.md#tenant-users-and-invitations), as pure functions.
 *
 * | from                        | asked      | move        | effect                                            |
 * |-----------------------------|------------|-------------|---------------------------------------------------|
 * | pending, invited (or expired)| invited   | invite      | new token and window, old link dead, e-mail queued |
 * | invited (or expired)        | pending    | cancel      | token and window cleared, link dead               |
 * | pending                     | pending    | none        | nothing changes                                   |
 * | pending, invited            | accepted   | accept      | member at once, no e-mail                         |
 * | accepted                    | disabled   | disable     | the membership grants nothing                     |
 * | disabled                    | accepted   | enable      | re-enabled                                        |
 * | accepted / disabled         | the same   | none        | nothing changes                                   |
 * | anything else               |            | 409 invalid_state_transition                    |
 *
 * A member (accepted or disabled) is never sent back to pending or invited: their acceptance stands, and
 * `disabled` is how access is withdrawn. A pending or invited user is never disabled: cancel instead —
 * except by a directory (planDirectoryMove).
 */
export type StatusMove = 'invite' | 'cancel' | 'accept' | 'disable' | 'enable' | 'deactivate' | 'none'

const MOVES: Record<MembershipStatus, Partial<Record<MembershipStatus, StatusMove>>> = {
  pending: { invited: 'invite', pending: 'none', accepted: 'accept' },
  invited: { invited: 'invite', pending: 'cancel', accepted: 'accept' },
  accepted: { disabled: 'disable', accepted: 'none' },
  disabled: { accepted: 'enable', disabled: 'none' },
}

/** The move from `from` to `to`, or 409 invalid_state_transition. */
export function planStatusMove(from: MembershipStatus, to: MembershipStatus): StatusMove {
  const move = MOVES[from][to]
  if (move) return move
  const allowed = Object.keys(MOVES[from]).filter((s) => s !== from)
  throw new AppError(
    'invalid_state_transition',
    `A membership with status ${from} cannot move to ${to}; from ${from} it can move to ${allowed.join(' or ')}`,
    { status: `cannot move from ${from} to ${to}` },
  )
}

/**
 * The moves a directory (SCIM, docs/scim.md) may ask for: /v1's, and also pending or invited → disabled
 * (`deactivate`), because a directory's `active: false` holds from any status. It is one move that leaves
 * what an acceptance followed by a disable would (the invitation's queued mail gone, the default
 * extension active), so the trail shows one status change, not two the directory never asked for.
 */
export function planDirectoryMove(from: MembershipStatus, to: MembershipStatus): StatusMove {
  if (to === 'disabled' && (from === 'pending' || from === 'invited')) return 'deactivate'
  return planStatusMove(from, to)
}

/** The read-only, derived `invitationStatus` (docs/api.md#tenant-users-and-invitations); expiry is judged by the injected clock. */
export function invitationStatusOf(
  row: { status: MembershipStatus; invitation_expiry_date: Date | null; no_password: boolean | null },
  now: Date,
): InvitationStatus {
  switch (row.status) {
    case 'pending':
      return 'pending'
    case 'invited':
      return isExpired(row.invitation_expiry_date, now) ? 'expired' : 'invited'
    case 'accepted':
      return row.no_password === true ? 'sso-only' : 'enabled'
    case 'disabled':
      return 'disabled'
  }
}

/** An invitation is live strictly before its expiry instant. */
export function isExpired(expiry: Date | null, now: Date): boolean {
  return expiry === null || expiry.getTime() <= now.getTime()
}

/** Whether accepting must set a password: the user has none and may log in with one here. */
export function needsPassword(hasPassword: boolean, noPassword: boolean | null): boolean {
  return !hasPassword && noPassword !== true
}
