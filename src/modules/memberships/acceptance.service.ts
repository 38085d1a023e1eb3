import type { ServiceContext } from '../../context.js'
import { hashPassword } from '../../crypto/passwords.js'
import { AppError, invalidField } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { type AuditActor, type AuditRecord, changesBetween, MASKED } from '../../outbox/audit-event.js'
import { recordAudit } from '../../outbox/audit-trail.js'
import { deleteQueuedInvitationMail } from '../../outbox/outbox.repository.js'
import { setInitialPassword } from './acceptance.repository.js'
import type { AcceptInvitationInput, Invitation } from './acceptance.schemas.js'
import { invitationLimits } from './invitation-limits.js'
import { invitationTokenHash } from './invitation-token.js'
import { isExpired, needsPassword } from './membership-status.js'
import { findByTokenHash, type InvitationRow, updateMembershipRow } from './memberships.repository.js'
import type { Membership } from './memberships.schemas.js'
import { getMembershipRecord } from './memberships.service.js'

/**
 * Accepting an invitation by its token (docs/api.md#tenant-users-and-invitations): the page's look-up and accept, and the existing
 * clients' `PUT …/users/{u} {"status":"accepted"}` with `Authorization: Token <token>`. A token works
 * once; past its expiry it is 410; cancelled, replaced, used, wrong or malformed it is 404. Failed
 * look-ups are rate limited per client address.
 */
export type InvitationLookup =
  | { state: 'live'; row: InvitationRow; tokenHash: string }
  | { state: 'expired'; row: InvitationRow }
  /** Accepted already (the hash is kept after acceptance so the page can say so). */
  | { state: 'used'; row: InvitationRow }
  | { state: 'unknown' }

export async function lookUpInvitation(
  ctx: ServiceContext,
  token: string,
  address: string,
): Promise<InvitationLookup> {
  const limits = invitationLimits(ctx)
  await limits.checkLookup(address)
  const tokenHash = invitationTokenHash(token)
  const row = tokenHash ? await findByTokenHash(ctx.db, tokenHash) : undefined
  if (!row || !tokenHash) {
    await limits.recordFailedLookup(address)
    return { state: 'unknown' }
  }
  if (row.status === 'accepted' || row.status === 'disabled') return { state: 'used', row }
  if (row.status !== 'invited') return { state: 'unknown' }
  if (isExpired(row.invitation_expiry_date, ctx.clock.now())) return { state: 'expired', row }
  return { state: 'live', row, tokenHash }
}

/** The API's answer to a link that cannot be accepted. */
export function invitationUnusable(lookup: Exclude<InvitationLookup, { state: 'live' }>): AppError {
  if (lookup.state === 'expired') {
    return new AppError(
      'invitation_expired',
      `This invitation expired at ${lookup.row.invitation_expiry_date?.toISOString()}; ask for a new one`,
    )
  }
  return new AppError(
    'invitation_not_found',
    'This invitation link is not valid: it was cancelled, replaced by a newer invitation, or already used',
  )
}

export function toInvitation(row: InvitationRow): Invitation {
  return {
    tenantId: row.tenant_id,
    tenantName: row.tenant_name,
    email: row.email,
    roleName: row.role_name,
    expiresAt: row.invitation_expiry_date?.toISOString() ?? '',
    needsPassword: needsPassword(row.has_password, row.no_password),
  }
}

/** `GET /v1/invitations/{token}`. */
export async function describeInvitation(
  ctx: ServiceContext,
  token: string,
  address: string,
): Promise<Invitation> {
  const lookup = await lookUpInvitation(ctx, token, address)
  if (lookup.state !== 'live') throw invitationUnusable(lookup)
  return toInvitation(lookup.row)
}

export interface AcceptOptions {
  address: string
  /** The page and `POST …/accept` make a user without a password choose one; the PUT path does not. */
  requirePassword: boolean
  /** The PUT path names the membership in its URL: the token must be that membership's. */
  expect?: { tenantId: string; userId: string }
}

/**
 * Accepts the invitation: the membership becomes `accepted` with its role, and — when the user has no
 * password and may use one here — the password chosen (hashed before the transaction) and names are set.
 */
export async function acceptInvitation(
  ctx: ServiceContext,
  token: string,
  input: AcceptInvitationInput,
  options: AcceptOptions,
): Promise<Membership> {
  const { row, tokenHash } = await liveInvitation(ctx, token, options)
  const settingPassword = needsPassword(row.has_password, row.no_password)
  if (settingPassword && options.requirePassword && input.password === undefined) {
    throw invalidField('password', 'is required: choose a password for this account')
  }
  const passwordHash =
    settingPassword && input.password !== undefined ? await hashPassword(input.password) : undefined

  const now = ctx.clock.now()
  // Accepted, the first extension becomes the active one when none is (docs/product.md#memberships).
  const activated = row.active_extension === null ? row.first_extension : null
  await ctx.db.transaction().execute(async (tx) => {
    const key = { tenantId: row.tenant_id, userId: row.user_id }
    // Only while still invited with this very token and not expired: a token works once.
    if (isExpired(row.invitation_expiry_date, now)) throw invitationUnusable({ state: 'expired', row })
    const accepted = await updateMembershipRow(
      tx,
      key,
      { status: 'invited', tokenHash },
      {
        status: 'accepted',
        updated: now,
        updated_by: row.user_id,
        ...(activated ? { active_extension: JSON.stringify(activated), extension: activated.value } : {}),
      },
    )
    if (accepted === 'stale') throw preconditionFailed()
    if (accepted === 'moved') throw invitationUnusable({ state: 'unknown' })
    if (passwordHash) {
      await setInitialPassword(
        tx,
        row.user_id,
        passwordHash,
        { firstName: input.firstName, lastName: input.lastName },
        now,
      )
    }
    await deleteQueuedInvitationMail(tx, key.tenantId, key.userId)
    // The invitee acts on its own invitation (it holds no token yet).
    const invitee = { kind: 'user', userId: row.user_id } as AuditActor
    await recordAudit(
      tx,
      ctx.clock,
      invitee,
      acceptanceRecords(row, input, activated, passwordHash !== undefined),
    )
  })
  // A new member, and perhaps a new password: permission and credential caches must see both.
  ctx.access.invalidate()
  return getMembershipRecord(ctx, row.tenant_id, row.user_id)
}

/** The live invitation of `token`, which is the one the caller expects when it names one. */
async function liveInvitation(ctx: ServiceContext, token: string, options: AcceptOptions) {
  const lookup = await lookUpInvitation(ctx, token, options.address)
  if (lookup.state !== 'live') throw invitationUnusable(lookup)
  const { expect } = options
  if (
    expect &&
    (lookup.row.tenant_id !== expect.tenantId.toLowerCase() ||
      lookup.row.user_id !== expect.userId.toLowerCase())
  ) {
    await invitationLimits(ctx).recordFailedLookup(options.address)
    throw invitationUnusable({ state: 'unknown' })
  }
  return lookup
}

/**
 * One event per record an acceptance changes (docs/product.md, "Audit trail"): the membership, and
 * the user when it got its password (and names).
 */
function acceptanceRecords(
  row: InvitationRow,
  input: AcceptInvitationInput,
  activated: unknown,
  passwordSet: boolean,
): AuditRecord[] {
  const membership: AuditRecord = {
    action: 'membership.status_changed',
    tenantId: row.tenant_id,
    target: { type: 'membership', id: row.user_id },
    changes: {
      status: ['invited', 'accepted'],
      ...(activated ? { activeExtension: [null, activated] } : {}),
    },
  }
  if (!passwordSet) return [membership]
  const names = changesBetween(
    { firstName: row.first_name, lastName: row.last_name },
    { firstName: input.firstName, lastName: input.lastName },
    ['firstName', 'lastName'],
  )
  return [
    membership,
    {
      action: 'user.password_changed',
      tenantId: null,
      target: { type: 'user', id: row.user_id },
      changes: { ...names, password: [null, MASKED] },
    },
  ]
}
