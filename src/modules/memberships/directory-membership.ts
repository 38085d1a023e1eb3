import type { Actor } from '../../access/actor.js'
import { ROLE_IDS } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import type { NewUserRow } from '../../db/schema.js'
import { type AuditEvent, auditEvent } from '../audit/audit.repository.js'
import { userCreatedRecord } from '../users/user-audit.js'
import { normalizeEmail } from '../users/user-rules.js'
import { givenExtensions } from './extensions.js'
import { membershipCreatedRecord } from './membership-audit.js'
import type { NewMembershipByEmail } from './membership-insert.js'
import { enrollmentWithRole, newPlatformUser } from './memberships.service.js'

/**
 * The memberships a directory makes (SCIM's create, docs/scim.md): built here with createMembership's
 * checks — the enrolment permission, the role and its ceiling, and MANAGE_ALL_USERS for a new platform
 * user — and written by the caller in one statement with rows of its own (scim/scim-user-writes.ts). No
 * invitation, no mail, no extensions given; `accepted`, or `disabled` for a directory's `active: false`
 * (memberships.service.ts, MembershipCreate).
 */

/** A directory's new membership (SCIM's create): its row and its `membership.created` event. */
export interface NewDirectoryMembership {
  membership: NewMembershipByEmail
  event: AuditEvent
}

/** A new platform user with an accepted membership: its rows and events, for one statement to write. */
export interface NewMember extends NewDirectoryMembership {
  user: { row: NewUserRow; event: AuditEvent }
}

/** What a directory asks of a new member: the person's e-mail, the role and the status it starts in. */
interface DirectoryMemberInput {
  email: string
  roleId: string
  status: 'accepted' | 'disabled'
}

/**
 * What createMembership writes for an unknown e-mail with status `accepted` (or a directory's `disabled`,
 * see MembershipCreate) — a platform user (Platform User role, no password) and its membership with
 * `roleId` — after the same checks, for a caller that
 * writes them in one statement with rows of its own (SCIM's create, scim/scim-user-writes.ts). The
 * e-mail is not looked up: that statement meets a taken one as users_email_key, and the caller then
 * links the existing user (newMembershipOfUser). Nothing is cached for a user this new, so no cache
 * needs clearing once it is written.
 */
export async function newMemberWithUser(
  ctx: ServiceContext,
  actor: Actor,
  tenantIdParam: string,
  input: DirectoryMemberInput & { firstName: string; lastName: string },
): Promise<NewMember> {
  const enrollment = await enrollmentWithRole(ctx, actor, tenantIdParam, input.roleId)
  const now = ctx.clock.now()
  const email = normalizeEmail(input.email)
  const row = await newPlatformUser(
    ctx,
    actor,
    { ...input, email, platformRoleId: ROLE_IDS.platformUser },
    email,
    now,
  )
  return {
    user: { row, event: auditEvent(ctx.clock, actor, userCreatedRecord(row)) },
    ...directoryMembership(ctx, actor, enrollment, { ...input, email }, row.id, now),
  }
}

/**
 * What createMembership writes for the e-mail of a platform user who exists — a membership `accepted` (or
 * a directory's `disabled`) with `roleId` and its event, whose target the writing statement resolves from
 * the e-mail — after the same checks, for a caller that writes it in one statement with rows of its own
 * (SCIM's link, scim/scim-user-writes.ts). Needs MANAGE_TENANT_ENROLLMENT only: nobody is created. The
 * caller clears the access cache once it is written (the person gains a membership).
 */
export async function newMembershipOfUser(
  ctx: ServiceContext,
  actor: Actor,
  tenantIdParam: string,
  input: DirectoryMemberInput,
): Promise<NewDirectoryMembership> {
  const enrollment = await enrollmentWithRole(ctx, actor, tenantIdParam, input.roleId)
  const email = normalizeEmail(input.email)
  return directoryMembership(ctx, actor, enrollment, { ...input, email }, null, ctx.clock.now())
}

/** A directory's membership row (no invitation, no mail, no extensions given) and its event. */
function directoryMembership(
  ctx: ServiceContext,
  actor: Actor,
  { tenantId, role }: { tenantId: string; role: { id: string; name: string } },
  input: DirectoryMemberInput,
  userId: string | null,
  now: Date,
): NewDirectoryMembership {
  return {
    membership: {
      email: input.email,
      tenantId,
      roleId: role.id,
      roleName: role.name,
      status: input.status,
      noPassword: null,
      defaultIdentityProvider: null,
      invitation: null,
      extensions: givenExtensions(undefined),
      activateFirstExtension: true,
      workStationId: '',
      actorId: actor.principalId,
      now,
    },
    event: auditEvent(
      ctx.clock,
      actor,
      membershipCreatedRecord({ tenantId, userId, roleId: role.id, status: input.status }),
    ),
  }
}
