import type { Actor } from '../../access/actor.js'
import { withinCeiling } from '../../access/ceiling.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { recordAudit } from '../audit/audit.repository.js'
import { loadRoleCatalog } from '../roles/roles.service.js'
import { checkAnAdministratorRemains } from './lockout-guard.js'
import {
  deleteApiKeysCreatedBy,
  deleteSecondFactors,
  eraseUserRow,
  lockUser,
  removeMemberships,
  scrubPersonalData,
} from './user-erasure.repository.js'
import { userNotFound } from './users.service.js'

/**
 * `DELETE /v1/users/{id}` (docs/product.md#offboarding-and-erasure): erases a person. Needs MANAGE_ALL_USERS in the caller's platform
 * role, never on oneself, and the role ceiling (nobody erases a user holding permissions it lacks). In one
 * transaction: memberships removed, API keys the user created deleted, second factors and recovery codes
 * deleted, sessions ended (the status move
 * does it, migration 0017) and reset links cleared, e-mail, names, telephone, external id and password removed, the record kept as
 * status "erased", the person's data removed from the outbox, stored responses and audit events, and a
 * `user.erased` event (plus `membership.removed` / `api_key.deleted`) written.
 */
/**
 * The step-up guard (modules/mfa/step-up.ts requireRecentSecondFactor), handed in by app.ts through
 * userRoutes: second factors build on users, so users does not import them.
 */
export type StepUpGuard = (ctx: ServiceContext, actor: Actor) => Promise<void>

export async function eraseUser(
  ctx: ServiceContext,
  actor: Actor,
  userId: string,
  requireStepUp: StepUpGuard,
): Promise<void> {
  if (actor.kind !== 'user' || !actor.platformPermissions.has('MANAGE_ALL_USERS')) {
    throw new AppError(
      'permission_denied',
      'MANAGE_ALL_USERS in the platform role is required to erase a user',
    )
  }
  const id = userId.toLowerCase()
  if (actor.userId === id) throw new AppError('self_lockout', 'Users cannot erase themselves')
  // Erasure cannot be undone: a step-up operation (docs/security.md, "Step-up").
  await requireStepUp(ctx, actor)
  const roles = await loadRoleCatalog(ctx)
  const now = ctx.clock.now()
  await ctx.db.transaction().execute(async (tx) => {
    const user = await lockUser(tx, id)
    if (!user || user.status === 'erased') throw userNotFound()
    for (const roleId of [user.role_id, ...user.additional_role_ids]) {
      const role = roles.get(roleId)
      if (role && !withinCeiling(role.permissions, actor.platformPermissions)) {
        throw new AppError(
          'role_exceeds_caller',
          `This user holds the role "${role.name}", which carries permissions the caller does not hold`,
        )
      }
    }
    await checkAnAdministratorRemains(tx, user, 'erased')
    const tenants = await removeMemberships(tx, id)
    const keys = await deleteApiKeysCreatedBy(tx, id)
    await deleteSecondFactors(tx, id)
    await scrubPersonalData(
      tx,
      id,
      { email: user.email, fullName: `${user.first_name} ${user.last_name}`.trim() },
      ctx.keys,
    )
    await eraseUserRow(tx, id, actor.principalId, now)
    await recordAudit(tx, ctx.clock, actor, [
      ...tenants.map((tenantId) => ({
        action: 'membership.removed',
        tenantId,
        target: { type: 'membership', id },
      })),
      ...keys.map((key) => ({
        action: 'api_key.deleted',
        tenantId: key.tenant_id,
        target: { type: 'apiKey', id: key.id },
      })),
      {
        action: 'user.erased',
        tenantId: null,
        target: { type: 'user', id },
        changes: { status: [user.status, 'erased'] },
      },
    ])
  })
  ctx.access.invalidate()
}
