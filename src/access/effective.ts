import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { findTenantPlacement, listGrantingMemberships, type TenantPlacement } from './access.repository.js'
import type { Actor } from './actor.js'
import { TtlCache } from './cache.js'
import { isPermission, type Permission } from './permissions.js'

/** An accepted membership in an active tenant, with what its role grants there. */
export interface GrantingMembership {
  tenantId: string
  roleId: string
  permissions: ReadonlySet<Permission>
}

/** What a caller may do in one tenant. */
export interface TenantAccess {
  tenant: TenantPlacement
  permissions: ReadonlySet<Permission>
  /** An accepted membership in exactly this tenant (lets a member read its tenant). */
  member: boolean
}

const NONE: ReadonlySet<Permission> = new Set()

/** How long a process trusts what it has read about callers, tenants and roles (API.md §11). */
export const CACHE_TTL_MS = 5_000

/**
 * Effective permissions (API.md §3): a user's platform-role permissions ∪ the permissions of its tenant
 * role in T or any ancestor of T, counting accepted memberships in active tenants; a disabled role
 * grants nothing (§11). An API key holds its role's permissions in its tenant and that tenant's
 * descendants, and nothing else (the authenticator caches them with the key).
 *
 * Look-ups are cached for CACHE_TTL_MS so that a request costs no extra round trip; every write that
 * changes a membership, a role, a user's standing or a tenant's `active` calls `invalidate()`, and other
 * processes see the change once their entries expire (docs/scaling.md).
 */
export class AccessControl {
  readonly #tenants: TtlCache<string, TenantPlacement | null>
  readonly #memberships: TtlCache<string, GrantingMembership[]>

  constructor(
    private readonly db: Kysely<Database>,
    ttlMs = CACHE_TTL_MS,
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

  /** A user's granting memberships and their roles' permissions: one query, then a cache hit. */
  async grantingMemberships(userId: string): Promise<GrantingMembership[]> {
    return this.#memberships.getOrLoad(userId, async () =>
      (await listGrantingMemberships(this.db, userId)).map((membership) => ({
        tenantId: membership.tenantId,
        roleId: membership.roleId,
        permissions: new Set(membership.permissions.filter(isPermission)),
      })),
    )
  }

  /** The caller's access in a tenant, or undefined when the tenant does not exist. */
  async inTenant(actor: Actor, tenantId: string): Promise<TenantAccess | undefined> {
    const tenant = await this.tenantPlacement(tenantId)
    if (!tenant) return undefined
    const lineage = new Set([tenant.id, ...tenant.parentIds])

    if (actor.kind === 'api_key') {
      const permissions = lineage.has(actor.tenantId) ? actor.permissions : NONE
      return { tenant, permissions, member: false }
    }

    const permissions = new Set<Permission>(actor.platformPermissions)
    let member = false
    for (const membership of await this.grantingMemberships(actor.userId)) {
      if (!lineage.has(membership.tenantId)) continue
      if (membership.tenantId === tenant.id) member = true
      for (const permission of membership.permissions) permissions.add(permission)
    }
    return { tenant, permissions, member }
  }

  /** Whether the caller holds `permission` from its platform role or in at least one tenant. */
  async holdsAnywhere(actor: Actor, permission: Permission): Promise<boolean> {
    if (actor.kind === 'api_key') return actor.permissions.has(permission)
    if (actor.platformPermissions.has(permission)) return true
    for (const membership of await this.grantingMemberships(actor.userId)) {
      if (membership.permissions.has(permission)) return true
    }
    return false
  }
}

/** A caller may see a tenant when it holds any permission there or is an accepted member of it. */
export function canSee(access: TenantAccess | undefined): access is TenantAccess {
  return access !== undefined && (access.permissions.size > 0 || access.member)
}
