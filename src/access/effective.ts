import type { Kysely } from 'kysely'
import { type Clock, systemClock } from '../clock.js'
import type { Database } from '../db/schema.js'
import { AppError } from '../errors.js'
import { findTenantPlacement, listGrantingMemberships, type TenantPlacement } from './access.repository.js'
import type { Actor, UserActor } from './actor.js'
import { TtlCache } from './cache.js'
import { mfaDeadline, wonWithSecondFactor } from './mfa-policy.js'
import { isPermission, type Permission } from './permissions.js'

/** What a caller may do in one tenant. */
export interface TenantAccess {
  tenant: TenantPlacement
  permissions: ReadonlySet<Permission>
  /** An accepted membership in exactly this tenant (lets a member read its tenant). */
  member: boolean
  /**
   * The caller would have access here, but not with this credential: a password where the user must
   * sign in through the tenant's identity provider, or another tenant's SSO (docs/product.md#password-rule). Grants nothing.
   */
  ssoRequired: boolean
  /**
   * The caller would have access here, but the tenant's effective policy requires a second factor that
   * this credential was not won with, and the member's deadline has passed (docs/security.md, "Policy").
   * Grants nothing.
   */
  mfaRequired: boolean
  /**
   * When the policy requires a second factor this credential lacks: the earliest deadline of the caller's
   * memberships that grant here (past when `mfaRequired`). Null when nothing is missing.
   */
  mfaDeadline: Date | null
}

const NONE: ReadonlySet<Permission> = new Set()

/** An accepted membership in an active tenant, with what its role grants (nothing while disabled). */
export interface GrantingMembership {
  tenantId: string
  roleId: string
  permissions: ReadonlySet<Permission>
  /** Whether the user may use its platform password there (docs/product.md#password-rule). */
  passwordAllowed: boolean
  /** When it was accepted: the start of the member's grace under a second-factor policy. */
  acceptedAt: Date
}

/**
 * Effective permissions (docs/product.md#permissions): a user's platform-role permissions ∪ the permissions of its tenant
 * role in T or any ancestor of T, counting accepted memberships in active tenants. An API key holds its
 * role's permissions in its tenant and that tenant's descendants, and nothing else.
 *
 * Look-ups are cached for a few seconds so that a request costs no extra round trip; every write that
 * changes a membership, a role, a user's standing or a tenant's `active` calls `invalidate()`.
 */
export class AccessControl {
  readonly #tenants: TtlCache<string, TenantPlacement | null>
  readonly #memberships: TtlCache<string, GrantingMembership[]>

  constructor(
    private readonly db: Kysely<Database>,
    ttlMs = 5_000,
    private readonly clock: Clock = systemClock,
  ) {
    this.#tenants = new TtlCache(ttlMs)
    this.#memberships = new TtlCache(ttlMs)
  }

  readonly #listeners: Array<() => void> = []

  /** Drops every cached look-up here and in the listeners (the authenticator's principals). */
  invalidate(): void {
    this.#tenants.clear()
    this.#memberships.clear()
    for (const listener of this.#listeners) listener()
  }

  onInvalidate(listener: () => void): void {
    this.#listeners.push(listener)
  }

  async tenantPlacement(tenantId: string): Promise<TenantPlacement | undefined> {
    const placement = await this.#tenants.getOrLoad(
      tenantId,
      async () => (await findTenantPlacement(this.db, tenantId)) ?? null,
    )
    return placement ?? undefined
  }

  /**
   * Every accepted membership of a user in an active tenant with its role's grants, whatever credential
   * it is used with: one query (memberships joined with their roles), then a cache hit.
   */
  async #allMemberships(userId: string): Promise<GrantingMembership[]> {
    return this.#memberships.getOrLoad(userId, async () =>
      (await listGrantingMemberships(this.db, userId)).map((membership) => ({
        tenantId: membership.tenantId,
        roleId: membership.roleId,
        permissions: new Set(membership.permissions.filter(isPermission)),
        passwordAllowed: membership.passwordAllowed,
        acceptedAt: membership.acceptedAt,
      })),
    )
  }

  /**
   * The memberships that grant something to this credential: those it may use (the password rule), less
   * those whose tenant's effective policy requires a second factor this credential lacks, past the
   * member's deadline (docs/security.md, "Policy") — what the routes that are not a tenant's own (the
   * platform's user list, a user by id) go by, so they are no way around the policy.
   */
  async grantingMemberships(actor: UserActor): Promise<GrantingMembership[]> {
    const granting: GrantingMembership[] = []
    for (const membership of await this.#usableMemberships(actor)) {
      if (!(await this.#refusedForSecondFactor(actor, membership))) granting.push(membership)
    }
    return granting
  }

  /** Whether the membership's tenant refuses this credential for want of a second factor, now. */
  async #refusedForSecondFactor(actor: UserActor, membership: GrantingMembership): Promise<boolean> {
    const policy = (await this.tenantPlacement(membership.tenantId))?.mfa
    if (policy?.policy !== 'required' || wonWithSecondFactor(actor, policy.acceptIdp)) return false
    const due = mfaDeadline(policy, membership.acceptedAt)
    return due !== null && due.getTime() <= this.clock.now().getTime()
  }

  /**
   * The memberships this credential may use (docs/product.md#password-rule): with a password, those where
   * the user may use it and that sit below no membership that forbids it; with a tenant's SSO, those in
   * that tenant and its sub-tenants.
   */
  async #usableMemberships(actor: UserActor): Promise<GrantingMembership[]> {
    const all = await this.#allMemberships(actor.userId)
    const granting: GrantingMembership[] = []
    if (actor.sso) {
      const origin = actor.sso.tenantId
      for (const m of all) {
        if (m.tenantId === origin || (await this.tenantPlacement(m.tenantId))?.parentIds.includes(origin))
          granting.push(m)
      }
      return granting
    }
    const forbidding = all.filter((m) => !m.passwordAllowed).map((m) => m.tenantId)
    if (forbidding.length === 0) return all
    for (const m of all) {
      if (!m.passwordAllowed) continue
      const parents = (await this.tenantPlacement(m.tenantId))?.parentIds ?? []
      if (!parents.some((id) => forbidding.includes(id))) granting.push(m)
    }
    return granting
  }

  /** The caller's access in a tenant, or undefined when the tenant does not exist. */
  async inTenant(actor: Actor, tenantId: string): Promise<TenantAccess | undefined> {
    const tenant = await this.tenantPlacement(tenantId)
    if (!tenant) return undefined
    // From the platform down to the tenant itself.
    const lineage = [...tenant.parentIds, tenant.id]

    if (actor.kind === 'api_key') {
      const permissions = lineage.includes(actor.tenantId) ? actor.permissions : NONE
      return { tenant, permissions, member: false, ssoRequired: false, mfaRequired: false, mfaDeadline: null }
    }

    // One pass over the user's memberships (cached): which grant here, and whether this credential may use them.
    const ssoDepth = actor.sso ? lineage.indexOf(actor.sso.tenantId) : -1
    // A policy that requires a second factor this credential lacks binds every membership granting here.
    const binding =
      tenant.mfa.policy === 'required' && !wonWithSecondFactor(actor, tenant.mfa.acceptIdp)
        ? tenant.mfa
        : null
    const now = this.clock.now().getTime()
    const permissions = new Set<Permission>(actor.platformPermissions)
    let member = false
    let refused = false
    let deadline: Date | null = null
    for (const membership of await this.#allMemberships(actor.userId)) {
      const depth = lineage.indexOf(membership.tenantId)
      if (depth < 0) continue
      const usable = actor.sso ? ssoDepth >= 0 && depth >= ssoDepth : membership.passwordAllowed
      if (!usable) {
        refused = true
        continue
      }
      const due = binding && mfaDeadline(binding, membership.acceptedAt)
      if (due && (!deadline || due < deadline)) deadline = due
      if (membership.tenantId === tenant.id) member = true
      for (const permission of membership.permissions) permissions.add(permission)
    }
    // A password where a membership on the way forbids it grants nothing in this whole subtree, platform
    // role included; another tenant's SSO grants nothing outside that tenant's subtree.
    if (refused && (!actor.sso || ssoDepth < 0))
      return {
        tenant,
        permissions: NONE,
        member: false,
        ssoRequired: true,
        mfaRequired: false,
        mfaDeadline: null,
      }
    // Past a member's deadline without the second factor, the same: nothing here, platform role included.
    if (deadline && deadline.getTime() <= now)
      return {
        tenant,
        permissions: NONE,
        member: false,
        ssoRequired: false,
        mfaRequired: true,
        mfaDeadline: deadline,
      }
    return { tenant, permissions, member, ssoRequired: false, mfaRequired: false, mfaDeadline: deadline }
  }

  /** Whether the caller holds `permission` from its platform role or in at least one tenant. */
  async holdsAnywhere(actor: Actor, permission: Permission): Promise<boolean> {
    if (actor.kind === 'api_key') return actor.permissions.has(permission)
    if (actor.platformPermissions.has(permission)) return true
    for (const membership of await this.grantingMemberships(actor)) {
      if (membership.permissions.has(permission)) return true
    }
    return false
  }
}

/** A caller may see a tenant when it holds any permission there or is an accepted member of it. */
export function canSee(access: TenantAccess | undefined): access is TenantAccess {
  if (access?.ssoRequired) throw ssoRequired(access.tenant.name)
  if (access?.mfaRequired) throw mfaRequired(access.tenant.name)
  return access !== undefined && (access.permissions.size > 0 || access.member)
}

/**
 * 403 sso_required: the caller is known here, but its credential does not count in this tenant (docs/product.md#password-rule).
 * Said by every check that asks whether a caller can see a tenant (canSee), so it holds on every route.
 */
export function ssoRequired(tenantName: string): AppError {
  return new AppError(
    'sso_required',
    `Sign in through the identity provider of tenant "${tenantName}" to act in it: this credential does not count there`,
  )
}

/**
 * 403 mfa_required: the caller is a member here, but the tenant's policy requires a second factor this
 * credential was not won with, and the member's grace has ended (docs/security.md, "Policy"). Said where
 * sso_required is (canSee), so it holds on every route of the tenant.
 */
export function mfaRequired(tenantName: string): AppError {
  return new AppError(
    'mfa_required',
    `Tenant "${tenantName}" requires a second factor: add one to your account and sign in with it to act in this tenant`,
    undefined,
    undefined,
    { status: 403 },
  )
}
