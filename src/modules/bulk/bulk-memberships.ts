import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import type { NewUserRow } from '../../db/schema.js'
import { AppError, invalidField } from '../../errors.js'
import { invitationMailRow } from '../../outbox/mail/invitation-mail.js'
import type { NewOutboxRow } from '../../outbox/outbox.repository.js'
import { type UnitTransaction, writeUnit } from '../../outbox/write-unit.js'
import { recordAudit } from '../audit/audit.repository.js'
import { issueInvitation } from '../memberships/invitation-token.js'
import { membershipCreatedRecord } from '../memberships/membership-audit.js'
import { insertMemberships, type NewMembershipRow } from '../memberships/membership-insert.js'
import type { CreateStatus } from '../memberships/memberships.schemas.js'
import { findTenantRoleFor } from '../roles/roles.service.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import { insertUsersSkippingTakenEmails, type StoredUser, type UserCreatedEvents } from './bulk.repository.js'
import type { BulkUserInput } from './bulk.schemas.js'

/** The membership one bulk row asks for, checked: where, with which role, in which status. */
export interface PlannedMembership {
  tenantId: string
  tenantName: string
  roleId: string
  roleName: string
  status: CreateStatus
}

type MembershipFields = Pick<BulkUserInput, 'tenantId' | 'tenantRoleId' | 'tenantStatus'>

// Distinct (tenant, role, status) triples remembered per request; a load naming more starts over.
const MAX_PLANS = 1000

/**
 * The membership rules of an invitation (docs/api.md#tenant-users-and-invitations), applied to bulk rows: MANAGE_TENANT_ENROLLMENT
 * effective in the tenant, a tenant role usable there, and the role ceiling against the caller's
 * effective permissions in that tenant. The checks are the memberships module's own functions; a
 * request checks each distinct (tenant, role, status) once, however many rows repeat it.
 */
export class BulkMemberships {
  readonly #plans = new Map<string, Promise<PlannedMembership | AppError>>()

  constructor(
    private readonly ctx: ServiceContext,
    private readonly actor: Actor,
  ) {}

  plan(fields: MembershipFields): Promise<PlannedMembership | AppError> {
    const { tenantId, tenantRoleId, tenantStatus = 'pending' } = fields
    if (tenantId === undefined) {
      return Promise.resolve(invalidField('tenantId', 'is required with tenantRoleId and tenantStatus'))
    }
    if (tenantRoleId === undefined) {
      return Promise.resolve(invalidField('tenantRoleId', 'is required with tenantId'))
    }
    const key = `${tenantId}/${tenantRoleId}/${tenantStatus}`.toLowerCase()
    let plan = this.#plans.get(key)
    if (!plan) {
      if (this.#plans.size >= MAX_PLANS) this.#plans.clear()
      plan = this.#check(tenantId, tenantRoleId, tenantStatus)
      this.#plans.set(key, plan)
    }
    return plan
  }

  async #check(
    tenantId: string,
    roleId: string,
    status: PlannedMembership['status'],
  ): Promise<PlannedMembership | AppError> {
    try {
      const access = await requireTenantPermission(this.ctx, this.actor, tenantId, [
        'MANAGE_TENANT_ENROLLMENT',
      ])
      const role = await findTenantRoleFor(this.ctx, access.tenant, roleId, 'tenantRoleId')
      checkRoleCeiling(role, access.permissions, 'tenantRoleId')
      return {
        tenantId: access.tenant.id,
        tenantName: access.tenant.name,
        roleId: role.id,
        roleName: role.name,
        status,
      }
    } catch (error) {
      if (error instanceof AppError) return error
      throw error
    }
  }
}

export interface NewMembership {
  user: NewUserRow
  membership: PlannedMembership
}

/**
 * Writes the memberships of freshly created users inside the batch's transaction, as an invitation
 * writes one (memberships.service.ts `createMembership`): the same row builder (memberships.repository
 * `insertMemberships`: the default extensions, the active extension only once a member), and for
 * `invited` a one-time token (stored hashed) whose e-mail is queued in the outbox in the same transaction
 * — the outbox row an invitation makes (invitation-mail.ts `invitationMailRow`). One multi-row INSERT for
 * the memberships and one for the batch's mails, however many rows are `invited`. Returns the invitees'
 * e-mails, whose mail counts toward the per-invitee limit once the transaction has committed.
 */
export async function writeMemberships(
  tx: UnitTransaction,
  ctx: ServiceContext,
  actor: Actor,
  inviterName: string,
  created: readonly NewMembership[],
): Promise<string[]> {
  if (created.length === 0) return []
  const now = ctx.clock.now()
  const mails: NewOutboxRow[] = []
  const invitees: string[] = []
  const rows: { userId: string; membership: NewMembershipRow }[] = []
  for (const { user, membership } of created) {
    const { status } = membership
    const invitation = status === 'invited' ? issueInvitation(ctx) : undefined
    if (invitation) {
      const facts = {
        tenantId: membership.tenantId,
        userId: user.id,
        to: user.email,
        tenantName: membership.tenantName,
        roleName: membership.roleName,
        inviterName,
        expiresAt: invitation.expiresAt.toISOString(),
      }
      mails.push(invitationMailRow(ctx.keys, facts, invitation.token, now))
      invitees.push(user.email)
    }
    rows.push({
      userId: user.id,
      membership: {
        tenantId: membership.tenantId,
        roleId: membership.roleId,
        status,
        noPassword: null,
        defaultIdentityProvider: null,
        invitation: invitation
          ? { expiresAt: invitation.expiresAt, tokenHash: invitation.tokenHash, invitedBy: actor.principalId }
          : null,
        extensions: NO_EXTENSIONS,
        activateFirstExtension: status === 'accepted',
        workStationId: '',
        actorId: actor.principalId,
        now,
      },
    })
  }
  await insertMemberships(tx.db, rows)
  // A user created in this very transaction has no queued mail to replace: the batch's mails are inserted
  // as they are, in one statement.
  await tx.mailAll(mails)
  return invitees
}

/** A bulk row gives no extensions: the user's default webrtc one is all it gets. */
const NO_EXTENSIONS = { given: [], defaultFirst: true }

/**
 * A batch some of whose rows name tenants, in one transaction: the users and their `user.created`
 * events (bulk.repository.ts), the memberships, the invitation mail and the membership events
 * (`membership.created`/`membership.invited`, by `recordAudit`, which also queues their webhook
 * deliveries) — the records an invitation writes. Answers the stored users and the invitees mailed.
 */
export async function insertUsersWithMemberships(
  ctx: ServiceContext,
  actor: Actor,
  inviter: string,
  rows: readonly { row: NewUserRow; membership: PlannedMembership | undefined }[],
  events: UserCreatedEvents,
): Promise<{ stored: StoredUser[]; invitees: string[] }> {
  return writeUnit(ctx).transaction(async (tx) => {
    // Rows naming tenants are few: their texts go as strings, whichever the database.
    const stored = await insertUsersSkippingTakenEmails(
      tx.db,
      rows.map((r) => r.row),
      events,
      'strings',
    )
    const created = new Set(stored.map((r) => r.id))
    const memberships = rows.flatMap((r) =>
      r.membership && created.has(r.row.id) ? [{ user: r.row, membership: r.membership }] : [],
    )
    const invitees = await writeMemberships(tx, ctx, actor, inviter, memberships)
    await recordAudit(
      tx.db,
      ctx.clock,
      actor,
      memberships.map(({ user, membership: { tenantId, roleId, status } }) =>
        membershipCreatedRecord({ tenantId, userId: user.id, roleId, status }),
      ),
    )
    return { stored, invitees }
  })
}
