import type { Permission } from './permissions.js'

/**
 * The role ceiling (docs/product.md#role-ceiling): nobody hands out more power than they hold. A role may be
 * assigned only when each of its permissions is one the caller holds in the same scope. Returns the
 * permissions the caller lacks — empty means allowed. Pure: every path that assigns a role calls it.
 */
export function permissionsBeyondCeiling(
  assigned: Iterable<Permission>,
  held: ReadonlySet<Permission>,
): Permission[] {
  const missing: Permission[] = []
  for (const permission of assigned) {
    if (!held.has(permission) && !missing.includes(permission)) missing.push(permission)
  }
  return missing
}

export function withinCeiling(assigned: Iterable<Permission>, held: ReadonlySet<Permission>): boolean {
  return permissionsBeyondCeiling(assigned, held).length === 0
}
