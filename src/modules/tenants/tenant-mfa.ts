import { type EffectiveMfaPolicy, effectiveMfaPolicy, type OwnMfaPolicy } from '../../access/mfa-policy.js'
import type { TenantRow, TenantUpdate } from '../../db/schema.js'
import type { CreateTenantInput, MfaPolicyEffective, UpdateTenantInput } from './tenants.schemas.js'

/**
 * A tenant's second-factor policy fields (docs/security.md, "Policy"): their stored values on a create and
 * an update, and the effective policy a single tenant's answer shows. `mfa_policy_since` moves only when
 * the policy is turned on (it starts every member's grace) and is cleared when it is turned off.
 */

type MfaColumns = Pick<TenantRow, 'mfa_policy' | 'mfa_grace_days' | 'mfa_accept_idp' | 'mfa_policy_since'>

export function mfaColumnsOnCreate(input: CreateTenantInput, now: Date): MfaColumns {
  const policy = input.mfaPolicy ?? 'optional'
  return {
    mfa_policy: policy,
    mfa_grace_days: input.mfaGraceDays ?? 7,
    mfa_accept_idp: input.mfaAcceptIdp ?? 'always',
    mfa_policy_since: policy === 'required' ? now : null,
  }
}

/** The columns an update writes; `mfa_policy_since` from the stored row, which the transaction read. */
export function mfaChanges(input: UpdateTenantInput): TenantUpdate {
  const changes: TenantUpdate = {}
  if (input.mfaPolicy !== undefined) changes.mfa_policy = input.mfaPolicy
  if (input.mfaGraceDays !== undefined) changes.mfa_grace_days = input.mfaGraceDays
  if (input.mfaAcceptIdp !== undefined) changes.mfa_accept_idp = input.mfaAcceptIdp
  return changes
}

/** When the policy in `changes` starts, given the stored row: now when turned on, null when turned off. */
export function mfaSince(before: TenantRow, changes: TenantUpdate, now: Date): TenantUpdate {
  if (changes.mfa_policy === undefined || changes.mfa_policy === before.mfa_policy) return {}
  return { mfa_policy_since: changes.mfa_policy === 'required' ? now : null }
}

/** Whether an update changes what step-up guards: the policy or the trust in identity providers. */
export function changesGuardedMfa(before: TenantRow, input: UpdateTenantInput): boolean {
  return (
    (input.mfaPolicy !== undefined && input.mfaPolicy !== before.mfa_policy) ||
    (input.mfaAcceptIdp !== undefined && input.mfaAcceptIdp !== before.mfa_accept_idp)
  )
}

/** A new tenant's effective policy: its own, under its parent's (none for a root tenant). */
export function newTenantMfaPolicy(
  row: TenantRow,
  parent: EffectiveMfaPolicy | undefined,
): EffectiveMfaPolicy {
  const own: OwnMfaPolicy = {
    id: row.id,
    policy: row.mfa_policy,
    graceDays: row.mfa_grace_days,
    acceptIdp: row.mfa_accept_idp,
    since: row.mfa_policy_since,
  }
  if (!parent) return effectiveMfaPolicy([own])
  const above: OwnMfaPolicy = { ...parent, id: parent.tenantId }
  return effectiveMfaPolicy([above, own])
}

export function toMfaPolicyEffective(policy: EffectiveMfaPolicy): MfaPolicyEffective {
  return {
    policy: policy.policy,
    tenantId: policy.tenantId,
    since: policy.since?.toISOString() ?? null,
    graceDays: policy.graceDays,
    acceptIdp: policy.acceptIdp,
  }
}
