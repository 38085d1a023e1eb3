import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { personNeedsSecondFactor } from '../mfa-policy/mfa-policy.service.js'
import { listActiveFactors } from './factors.repository.js'

/**
 * Where a second-factor policy binds a person's own credentials (docs/security.md, "Second factors",
 * "Signing in with a second factor"): the last factor cannot be removed while a policy requires one of
 * this person, and Basic with a password is refused under such a policy, factor or not.
 */

/** 409 mfa_required_by_policy when `factorId` is the person's last active factor and a policy needs one. */
export async function checkFactorMayGo(ctx: ServiceContext, userId: string, factorId: string): Promise<void> {
  const others = (await listActiveFactors(ctx.db, userId)).filter((factor) => factor.id !== factorId)
  if (others.length > 0) return
  if (await personNeedsFactor(ctx, userId)) {
    throw new AppError(
      'mfa_required_by_policy',
      'This is your last second factor and a policy requires one of you: add another before removing it',
    )
  }
}

/**
 * Whether a policy — a tenant's effective one, or the platform's for platform roles — requires a factor
 * of the person (the policy module decides: modules/mfa-policy).
 */
export async function personNeedsFactor(ctx: ServiceContext, userId: string): Promise<boolean> {
  return personNeedsSecondFactor(ctx.db, userId)
}
