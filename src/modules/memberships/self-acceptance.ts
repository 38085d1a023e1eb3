import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { deleteQueuedInvitationMail } from '../../outbox/outbox.repository.js'
import { recordAudit } from '../audit/audit.repository.js'
import { changedMembershipFields } from './membership-changes.js'
import { membershipNotFound } from './membership-record.js'
import { isExpired } from './membership-status.js'
import { findMembership, updateMembershipRow } from './memberships.repository.js'
import type { Membership, UpdateMembershipInput } from './memberships.schemas.js'
import { getMembershipRecord } from './memberships.service.js'

/**
 * An existing user accepts an invitation with its own login (docs/api.md#tenant-users-and-invitations): `PUT /v1/tenants/{t}/users/{self}
 * {"status":"accepted"}` while its membership there is `invited` and not expired. No enrolment permission
 * is needed and nothing else changes. Returns undefined when the request is not that (the caller then
 * applies the ordinary rules: a member changing itself otherwise needs MANAGE_TENANT_ENROLLMENT).
 */
export async function acceptOwnInvitation(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  userId: string,
  input: UpdateMembershipInput,
): Promise<Membership | undefined> {
  if (actor.kind !== 'user' || actor.userId !== userId.toLowerCase()) return undefined
  if (input.status !== 'accepted') return undefined
  const current = await findMembership(ctx.db, tenantId.toLowerCase(), actor.userId)
  if (!current) throw membershipNotFound()
  if (current.status !== 'invited') return undefined
  // Fields repeating the stored membership are not changes (docs/api.md#tenant-users-and-invitations); anything else that differs
  // takes the ordinary rules.
  if (changedMembershipFields(current, input).some((key) => key !== 'status')) return undefined
  const now = ctx.clock.now()
  if (isExpired(current.invitation_expiry_date, now)) {
    throw new AppError(
      'invitation_expired',
      `This invitation expired at ${current.invitation_expiry_date?.toISOString()}; ask for a new one`,
    )
  }
  const key = { tenantId: current.tenant_id, userId: current.user_id }
  const first = current.extensions[0]
  await ctx.db.transaction().execute(async (tx) => {
    const accepted = await updateMembershipRow(
      tx,
      key,
      { status: 'invited', tokenHash: current.invitation_token_hash },
      {
        status: 'accepted',
        updated: now,
        updated_by: actor.principalId,
        ...(current.active_extension === null && first
          ? { active_extension: JSON.stringify(first), extension: (first as { value: string }).value }
          : {}),
      },
    )
    if (accepted === 'stale') throw preconditionFailed()
    if (accepted === 'moved') {
      throw new AppError(
        'invalid_state_transition',
        'The membership changed while this request was processed; read it again and retry',
      )
    }
    await deleteQueuedInvitationMail(tx, key.tenantId, key.userId)
    await recordAudit(tx, ctx.clock, actor, {
      action: 'membership.status_changed',
      tenantId: key.tenantId,
      target: { type: 'membership', id: key.userId },
      changes: {
        status: ['invited', 'accepted'],
        ...(current.active_extension === null && first ? { activeExtension: [null, first] } : {}),
      },
    })
  })
  ctx.access.invalidate()
  return getMembershipRecord(ctx, key.tenantId, key.userId)
}
