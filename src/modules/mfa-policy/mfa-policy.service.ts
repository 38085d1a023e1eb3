import type { Kysely } from 'kysely'
import type { Actor, UserActor } from '../../access/actor.js'
import { ROLE_IDS } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import type { Database } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { recordAudit } from '../../outbox/audit-trail.js'
import {
  policyRequiresFactorOf,
  readPlatformMfa,
  userHasActiveFactor,
  writePlatformMfa,
} from './mfa-policy.repository.js'
import type { PlatformSecurity } from './mfa-policy.schemas.js'
import type { StepUpGuard } from './step-up-guard.js'

/**
 * The second-factor policy's own operations (docs/security.md, "Policy"): whether any policy requires a
 * factor of a person, and the platform setting for platform roles. A tenant's policy is a field of the
 * tenant (modules/tenants), and what it refuses is decided with the rest of access (access/effective.ts).
 */

/**
 * Whether any policy requires a second factor of this person: an accepted membership in a tenant whose
 * effective policy is required (whatever the member's grace), or a platform role with permissions while
 * the platform requires a factor for them. What Basic with a password and the removal of a last factor
 * (409 mfa_required_by_policy) are decided by.
 */
export async function personNeedsSecondFactor(db: Kysely<Database>, userId: string): Promise<boolean> {
  return policyRequiresFactorOf(db, userId)
}

/**
 * The Platform Administrator, with a credential whose platform power counts: not a tenant's single
 * sign-on, and not a credential without a second factor while the platform requires one (their platform
 * permissions are empty then, auth/principals.ts).
 */
function platformAdministrator(actor: Actor): UserActor {
  if (actor.kind !== 'user' || actor.platformRoleId !== ROLE_IDS.platformAdministrator) {
    throw new AppError('permission_denied', 'Only a Platform Administrator manages platform security')
  }
  if (actor.platformPermissions.size === 0) {
    throw new AppError(
      'permission_denied',
      'This credential carries no platform permission: sign in with your second factor (platform roles require one)',
    )
  }
  return actor
}

export async function getPlatformSecurity(ctx: ServiceContext, actor: Actor): Promise<PlatformSecurity> {
  platformAdministrator(actor)
  return { mfaForPlatformRoles: await readPlatformMfa(ctx.db) }
}

/**
 * Sets whether platform roles need a second factor. A step-up operation. Turning it on is refused (409
 * mfa_required_by_policy) while the administrator asking has no factor: the setting would take their own
 * platform power away at once, and with it the power to turn it off — nobody locks the platform out.
 */
export async function updatePlatformSecurity(
  ctx: ServiceContext,
  actor: Actor,
  input: PlatformSecurity,
  requireStepUp: StepUpGuard,
): Promise<PlatformSecurity> {
  const admin = platformAdministrator(actor)
  await requireStepUp(ctx, admin)
  const value = input.mfaForPlatformRoles
  if (value === 'required' && !(await userHasActiveFactor(ctx.db, admin.userId))) {
    throw new AppError(
      'mfa_required_by_policy',
      'Add a second factor to your own account first: requiring one for platform roles would take your platform permissions away',
      { mfaForPlatformRoles: 'needs a second factor on your own account' },
    )
  }
  await ctx.db.transaction().execute(async (tx) => {
    const before = await writePlatformMfa(tx, value)
    if (before === value) return
    await recordAudit(tx, ctx.clock, actor, {
      action: 'platform.security_updated',
      tenantId: null,
      target: { type: 'platform', id: ctx.platform.id },
      changes: { mfaForPlatformRoles: [before, value] },
    })
  })
  // Platform permissions are part of every cached principal.
  ctx.access.invalidate()
  return { mfaForPlatformRoles: value }
}
