import { describe, expect, it } from 'vitest'
import { permissionsBeyondCeiling, withinCeiling } from '../../src/access/ceiling.js'
import { BUILT_IN_ROLES, PERMISSIONS, type Permission } from '../../src/access/permissions.js'

/**
 * The role ceiling as a pure function (docs/product.md#role-ceiling), checked exhaustively: for every pair (assigned, held)
 * of subsets of the permission catalogue — which includes every subset of every built-in role's
 * permission set — the answer is exactly the set difference, computed independently with bit masks.
 */

const subsets: Permission[][] = Array.from({ length: 1 << PERMISSIONS.length }, (_, mask) =>
  PERMISSIONS.filter((_p, bit) => mask & (1 << bit)),
)
const heldSets = subsets.map((permissions) => new Set(permissions))

/**
 * Every assigned subset is checked against held sets: all 2^n of them while that is cheap, otherwise every
 * built-in role's set, the empty and full sets, every single permission and every catalogue minus one, and
 * 256 more drawn by a fixed-seed generator — the check is elementwise, so these cover every way an
 * element can be held or not.
 */
function heldMasksToCheck(): number[] {
  const all = subsets.length
  if (all <= 1024) return Array.from({ length: all }, (_, mask) => mask)
  const full = all - 1
  const masks = new Set<number>([0, full])
  for (let bit = 0; bit < PERMISSIONS.length; bit++) {
    masks.add(1 << bit)
    masks.add(full & ~(1 << bit))
  }
  for (const role of BUILT_IN_ROLES) {
    masks.add(role.permissions.reduce((mask, p) => mask | (1 << PERMISSIONS.indexOf(p)), 0))
  }
  let seed = 0x2545f491
  while (masks.size < 256 + 2 * PERMISSIONS.length + 2) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    masks.add(seed & full)
  }
  return [...masks]
}

describe('permissionsBeyondCeiling', () => {
  it('returns exactly assigned \\ held, in catalogue order, for every assigned subset and each held set', () => {
    let allowed = 0
    let expectedAllowed = 0
    let mismatches = 0
    const heldMasks = heldMasksToCheck()
    for (let assignedMask = 0; assignedMask < subsets.length; assignedMask++) {
      const assigned = subsets[assignedMask]!
      for (const heldMask of heldMasks) {
        if ((assignedMask & ~heldMask) === 0) expectedAllowed++
        const expectedMask = assignedMask & ~heldMask
        const missing = permissionsBeyondCeiling(assigned, heldSets[heldMask]!)
        const missingMask = missing.reduce((mask, p) => mask | (1 << PERMISSIONS.indexOf(p)), 0)
        const inOrder = missing.every(
          (p, i) => i === 0 || PERMISSIONS.indexOf(missing[i - 1]!) < PERMISSIONS.indexOf(p),
        )
        const within = withinCeiling(assigned, heldSets[heldMask]!)
        if (missingMask !== expectedMask || !inOrder || within !== (expectedMask === 0)) mismatches++
        if (within) allowed++
      }
    }
    expect(mismatches).toBe(0)
    // Allowed exactly when assigned ⊆ held: Σ over the held sets of 2^|held| pairs.
    expect(allowed).toBe(expectedAllowed)
    expect(allowed).toBe(heldMasks.reduce((sum, mask) => sum + 2 ** popcount(mask), 0))
  })

  it('names each missing permission once, even when the assigned list repeats it', () => {
    expect(permissionsBeyondCeiling(['MANAGE_TENANT', 'MANAGE_TENANT', 'VIEW_ALL_USERS'], new Set())).toEqual(
      ['MANAGE_TENANT', 'VIEW_ALL_USERS'],
    )
  })

  it('treats the empty role as within every ceiling, and any permission as beyond the empty one', () => {
    for (const held of heldSets) expect(withinCeiling([], held)).toBe(true)
    for (const permission of PERMISSIONS) expect(withinCeiling([permission], new Set())).toBe(false)
  })
})

describe('the ceiling between the built-in roles', () => {
  const byName = new Map(BUILT_IN_ROLES.map((role) => [role.name, role]))

  it.each(
    BUILT_IN_ROLES.flatMap((caller) =>
      BUILT_IN_ROLES.map((assigned) => [caller.name, assigned.name] as const),
    ),
  )('%s assigning %s is allowed exactly when the permissions are a subset', (callerName, assignedName) => {
    const caller = byName.get(callerName)!
    const assigned = byName.get(assignedName)!
    const isSubset = assigned.permissions.every((p) => caller.permissions.includes(p))
    expect(withinCeiling(assigned.permissions, new Set(caller.permissions))).toBe(isSubset)
    // And every subset of the assigned role is judged the same way, one permission at a time.
    for (const permission of assigned.permissions) {
      expect(withinCeiling([permission], new Set(caller.permissions))).toBe(
        caller.permissions.includes(permission),
      )
    }
  })

  it('keeps a Supervisor from assigning an Administrator, and lets it assign an Agent', () => {
    const supervisor = new Set(byName.get('Supervisor')!.permissions)
    expect(permissionsBeyondCeiling(byName.get('Administrator')!.permissions, supervisor)).toEqual([
      'MANAGE_TENANT',
      'MANAGE_ALL_PROVIDERS',
      'MANAGE_ALL_ROLES',
      'MANAGE_ALL_APP_CREDENTIALS',
      'VIEW_AUDIT_LOG',
      'IDENTITY_PROVIDERS_READ',
      'IDENTITY_PROVIDERS_UPDATE',
      'MANAGE_WEBHOOKS',
    ])
    expect(withinCeiling(byName.get('Platform Administrator')!.permissions, supervisor)).toBe(false)
    expect(withinCeiling(byName.get('Agent')!.permissions, supervisor)).toBe(true)
    expect(withinCeiling(byName.get('Supervisor')!.permissions, supervisor)).toBe(true)
  })
})

function popcount(mask: number): number {
  let count = 0
  for (let m = mask; m; m &= m - 1) count++
  return count
}
