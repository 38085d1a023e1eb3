import { describe, expect, it } from 'vitest'
import { permissionsBeyondCeiling, withinCeiling } from '../src/access/ceiling.js'
import { BUILT_IN_ROLES, PERMISSIONS, type Permission } from '../src/access/permissions.js'

/**
 * The role ceiling as a pure function (API.md §3), checked exhaustively: for every pair (assigned, held)
 * of subsets of the permission catalogue — which includes every subset of every built-in role's
 * permission set — the answer is exactly the set difference, computed independently with bit masks.
 */

const subsets: Permission[][] = Array.from({ length: 1 << PERMISSIONS.length }, (_, mask) =>
  PERMISSIONS.filter((_p, bit) => mask & (1 << bit)),
)
const heldSets = subsets.map((permissions) => new Set(permissions))

describe('permissionsBeyondCeiling', () => {
  it('returns exactly assigned \\ held, in catalogue order, for all 2^10 × 2^10 subset pairs', () => {
    let allowed = 0
    let mismatches = 0
    for (let assignedMask = 0; assignedMask < subsets.length; assignedMask++) {
      const assigned = subsets[assignedMask]!
      for (let heldMask = 0; heldMask < subsets.length; heldMask++) {
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
    // Allowed exactly when assigned ⊆ held: Σ over held of 2^|held| = 3^10 pairs.
    expect(allowed).toBe(3 ** PERMISSIONS.length)
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
    ])
    expect(withinCeiling(byName.get('Platform Administrator')!.permissions, supervisor)).toBe(false)
    expect(withinCeiling(byName.get('Agent')!.permissions, supervisor)).toBe(true)
    expect(withinCeiling(byName.get('Supervisor')!.permissions, supervisor)).toBe(true)
  })
})
