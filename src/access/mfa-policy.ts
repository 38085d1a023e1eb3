import type { AuthMethod, MfaAcceptIdp, MfaPolicy } from '../db/schema.js'
import type { UserActor } from './actor.js'

/**
 * The second-factor policy's rules (docs/security.md, "Policy"), pure: what the access check, the
 * sign-in's description and the member lists decide from. The policy module (modules/mfa-policy) stores
 * and shows it; this layer only reads it.
 */

/** A tenant's own policy fields, as stored. */
export interface OwnMfaPolicy {
  id: string
  policy: MfaPolicy
  graceDays: number
  acceptIdp: MfaAcceptIdp
  since: Date | null
}

/**
 * A tenant's effective policy: the strictest of the tenant and its ancestors. `tenantId` is the tenant it
 * comes from — the nearest tenant, itself or an ancestor, whose policy requires a factor, whose `since`
 * and `graceDays` set members' deadlines; the tenant itself while none does. `acceptIdp` is `asserted`
 * when the tenant or any ancestor says so: a sub-tenant cannot loosen its trust in identity providers
 * either.
 */
export interface EffectiveMfaPolicy {
  policy: MfaPolicy
  tenantId: string
  since: Date | null
  graceDays: number
  acceptIdp: MfaAcceptIdp
}

const DAY_MS = 86_400_000

/** The effective policy of the last tenant of `lineage` (ordered from the root down to the tenant). */
export function effectiveMfaPolicy(lineage: readonly OwnMfaPolicy[]): EffectiveMfaPolicy {
  const self = lineage[lineage.length - 1]
  if (!self) throw new Error('a lineage holds at least the tenant itself')
  const acceptIdp = lineage.some((t) => t.acceptIdp === 'asserted') ? 'asserted' : 'always'
  for (let i = lineage.length - 1; i >= 0; i -= 1) {
    const tenant = lineage[i] as OwnMfaPolicy
    if (tenant.policy === 'required')
      return {
        policy: 'required',
        tenantId: tenant.id,
        since: tenant.since,
        graceDays: tenant.graceDays,
        acceptIdp,
      }
  }
  return { policy: 'optional', tenantId: self.id, since: self.since, graceDays: self.graceDays, acceptIdp }
}

/** The amr values of a second factor: a one-time code, a hardware or software key, a recovery code. */
const SECOND_FACTORS: ReadonlySet<AuthMethod> = new Set(['otp', 'hwk', 'swk', 'rec'])

/** Whether a sign-in's methods (`amr`) hold a second factor of this service's own. */
export function heldSecondFactor(methods: readonly AuthMethod[]): boolean {
  return methods.some((method) => SECOND_FACTORS.has(method))
}

/**
 * Whether the credential was won with a second factor, for a tenant trusting identity providers as
 * `acceptIdp` says: a code, a passkey or a recovery code always; a single sign-on when the tenant trusts
 * its provider's sign-in (`always`), or when the provider asserted more than one factor (`asserted`).
 * Basic with a password never.
 */
export function wonWithSecondFactor(actor: UserActor, acceptIdp: MfaAcceptIdp): boolean {
  const methods = actor.authMethods ?? []
  if (heldSecondFactor(methods)) return true
  if (!actor.sso || !methods.includes('sso')) return false
  return acceptIdp === 'always' || actor.sso.mfa === true
}

/**
 * A member's deadline under a policy that requires a factor: the later of the policy's turning on and the
 * membership's acceptance, plus the grace days of the tenant the policy comes from. Null when nothing is
 * required.
 */
export function mfaDeadline(policy: EffectiveMfaPolicy, acceptedAt: Date): Date | null {
  if (policy.policy !== 'required') return null
  const start = Math.max(policy.since?.getTime() ?? 0, acceptedAt.getTime())
  return new Date(start + policy.graceDays * DAY_MS)
}
