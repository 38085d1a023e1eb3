import type { TenantAccess } from '../../access/effective.js'
import type { CatalogRole } from '../../access/role-catalog.js'
import type { ServiceContext } from '../../context.js'
import { updateMembership } from '../memberships/membership-update.js'
import { memberRoleIds } from '../memberships/memberships.service.js'
import { findTenantRoleFor } from '../roles/roles.service.js'
import { checkRoleCeiling } from '../tenants/tenant-access.js'
import { groupsOfUsers, listGroups } from './scim.repository.js'
import type { ScimCall } from './scim-context.js'
import { defaultRoleId } from './scim-context.js'

/**
 * The group → role mapping (docs/scim.md): a member's role is that of its mapped group with the lowest
 * `priority` (the earlier-made group on a tie), else the tenant's `defaultRoleId`. While no group of the
 * tenant is mapped, SCIM never changes roles. Every role a change would assign is checked against the
 * acting key's ceiling before anything is written (403, nothing changed).
 */

export interface RoleChange {
  userId: string
  roleId: string
}

type Membership = Map<string, string[]>

/**
 * The role changes that follow when the given users' groups become `groupsOf` (user → group ids; users
 * absent keep the groups they have). The ceiling is checked here, before the caller writes anything.
 */
export async function planRoles(
  call: { ctx: ServiceContext; tenantId: string },
  access: TenantAccess,
  userIds: string[],
  override: { groupId: string; members: Set<string> } | undefined,
  mappingOverride?: { groupId: string; roleId: string | null; priority: number },
): Promise<RoleChange[]> {
  const { ctx, tenantId } = call
  const groups = await listGroups(ctx.db, tenantId)
  const mapping = new Map(
    groups.map((g) => [g.id, { roleId: g.role_id, priority: g.priority, order: g.created.getTime() }]),
  )
  if (mappingOverride) {
    const existing = mapping.get(mappingOverride.groupId)
    if (existing) mapping.set(mappingOverride.groupId, { ...existing, ...mappingOverride })
  }
  if (![...mapping.values()].some((m) => m.roleId !== null)) return []
  const fallback = await defaultRoleId(call)
  const current: Membership = new Map()
  for (const [userId, list] of await groupsOfUsers(ctx.db, tenantId, userIds))
    current.set(
      userId,
      list.map((g) => g.id),
    )
  // The members' roles in one read a thousand, and each role assigned checked once.
  const held = await memberRoleIds(ctx, tenantId, userIds)
  const checked = new Map<string, CatalogRole>()
  const changes: RoleChange[] = []
  for (const userId of userIds) {
    let ids = current.get(userId) ?? []
    if (override) {
      ids = ids.filter((id) => id !== override.groupId)
      if (override.members.has(userId)) ids.push(override.groupId)
    }
    const mapped = ids
      .map((id) => mapping.get(id))
      .filter((m): m is { roleId: string; priority: number; order: number } => !!m && m.roleId !== null)
      .sort((a, b) => a.priority - b.priority || a.order - b.order)
    const roleId = mapped[0]?.roleId ?? fallback
    const holds = held.get(userId)
    if (holds === undefined || holds === roleId) continue
    let role = checked.get(roleId)
    if (!role) {
      role = await findTenantRoleFor(ctx, access.tenant, roleId)
      checkRoleCeiling(role, access.permissions)
      checked.set(roleId, role)
    }
    changes.push({ userId, roleId: role.id })
  }
  return changes
}

/** Applies planned changes through the memberships service (membership.role_changed for each). */
export async function applyRoles(call: ScimCall, changes: RoleChange[]): Promise<void> {
  for (const change of changes) {
    await updateMembership(call.ctx, call.actor, call.tenantId, change.userId, { roleId: change.roleId })
  }
}
