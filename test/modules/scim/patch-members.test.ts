import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { GROUP_RESOURCE, USER_RESOURCE } from '../../../src/modules/scim/scim-attributes.js'
import { applyPatch } from '../../../src/modules/scim/scim-patch.js'

/**
 * A group PATCH that adds and removes members by value (docs/scim.md; issue 37 item 4): `add` skips a
 * member the group holds already and `remove members` with a value list removes those members, both
 * comparing ids without regard to case. The work must grow linearly with the group and the body — a scan
 * of the group per value sent made 10,000 members and 20,000 values some 200 million comparisons on the
 * event loop. Nothing is timed: the test counts the case-folds (`toLowerCase`), the unit of work of every
 * id comparison, while the group and the body double.
 */

const MAX_VALUES_PER_OPERATION = 100

interface Members {
  stored: { displayName: string; members?: { value: string }[] }
  active: undefined
}

function group(ids: readonly string[]): Members {
  return { stored: { displayName: 'Sales', members: ids.map((value) => ({ value })) }, active: undefined }
}

/** Entra ID's shape: the new members added a hundred at a time, then the old ones removed by one value list. */
function replaceEveryone(old: readonly string[], fresh: readonly string[]) {
  const adds = []
  for (let i = 0; i < fresh.length; i += MAX_VALUES_PER_OPERATION) {
    const value = fresh.slice(i, i + MAX_VALUES_PER_OPERATION).map((id) => ({ value: id }))
    adds.push({ op: 'add' as const, path: 'members', value })
  }
  const remove = { op: 'remove' as const, path: 'members', value: old.map((id) => ({ value: id })) }
  return [...adds, remove]
}

/**
 * Calls of String.prototype.toLowerCase while `work` runs. Counted by a wrapper, not a spy: a spy keeps
 * every call, and the millions of a quadratic PATCH would exhaust the test's memory.
 */
function countCaseFolds<T>(work: () => T): { result: T; caseFolds: number } {
  const original = String.prototype.toLowerCase
  let caseFolds = 0
  String.prototype.toLowerCase = function (this: string) {
    caseFolds++
    return original.call(this)
  }
  try {
    return { result: work(), caseFolds }
  } finally {
    String.prototype.toLowerCase = original
  }
}

/** The case-folds one PATCH of a group of `size` members makes, replacing every member with a new one. */
function caseFoldsOfPatch(size: number): number {
  const old = Array.from({ length: size }, () => randomUUID())
  const fresh = Array.from({ length: size }, () => randomUUID())
  const operations = replaceEveryone(old, fresh)
  const { result, caseFolds } = countCaseFolds(() => applyPatch(GROUP_RESOURCE, group(old), operations))
  expect((result.stored.members as { value: string }[]).map((m) => m.value)).toEqual(fresh)
  return caseFolds
}

describe('PATCH of a group’s members by value', () => {
  it('does work linear in the members held and the values sent: doubling both doubles it', () => {
    const single = caseFoldsOfPatch(1_000)
    const double = caseFoldsOfPatch(2_000)
    // Every id held or sent is folded at least once, so the count sees the comparisons' work …
    expect(single).toBeGreaterThanOrEqual(2 * 1_000)
    // … and it doubles with the input; a scan per value would make it four times as many.
    expect(double / single).toBeLessThan(2.5)
  })

  it('adds each member once and removes by value without regard to case, leaving other members in order', () => {
    const [a, b, c, d] = Array.from({ length: 4 }, () => randomUUID())
    const next = applyPatch(GROUP_RESOURCE, group([a!, b!, c!]), [
      { op: 'add', path: 'members', value: [{ value: b!.toUpperCase() }, { value: d }, { value: d }] },
      { op: 'remove', path: 'members', value: [a!.toUpperCase(), { value: 'not-a-member' }] },
      { op: 'add', path: 'members', value: [{ value: a }] },
    ])
    expect(next.stored.members).toEqual([{ value: b }, { value: c }, { value: d }, { value: a }])
    const emptied = applyPatch(GROUP_RESOURCE, group([a!]), [
      { op: 'remove', path: 'members', value: [{ value: a }] },
    ])
    expect(emptied.stored.members).toBeUndefined()
  })

  it('writes pending adds back before an operation that reads the attribute: a filter, a replace, a remove', () => {
    const [a, b] = [randomUUID(), randomUUID()]
    const filtered = applyPatch(GROUP_RESOURCE, group([]), [
      { op: 'add', path: 'members', value: [{ value: a }, { value: b }] },
      { op: 'remove', path: `members[value eq "${a}"]` },
    ])
    expect(filtered.stored.members).toEqual([{ value: b }])
    const replaced = applyPatch(GROUP_RESOURCE, group([a]), [
      { op: 'add', path: 'members', value: [{ value: b }] },
      { op: 'replace', path: 'members', value: [{ value: a }, { value: a }] },
      { op: 'add', path: 'members', value: [{ value: b }] },
    ])
    expect(replaced.stored.members).toEqual([{ value: a }, { value: b }])
    const removed = applyPatch(GROUP_RESOURCE, group([a]), [
      { op: 'add', path: 'members', value: [{ value: b }] },
      { op: 'remove', path: 'members' },
    ])
    expect(removed.stored.members).toBeUndefined()
    // A user's e-mails: added by value, then changed through a filter on the list the add left.
    const user = applyPatch(
      USER_RESOURCE,
      { stored: { userName: 'ada', emails: [{ value: 'ada@work.test', type: 'work' }] }, active: undefined },
      [
        {
          op: 'add',
          path: 'emails',
          value: [{ value: 'ADA@work.test' }, { value: 'ada@home.test', type: 'home' }],
        },
        { op: 'replace', path: 'emails[type eq "home"].value', value: 'ada@elsewhere.test' },
      ],
    )
    expect(user.stored.emails).toEqual([
      { value: 'ada@work.test', type: 'work' },
      { value: 'ada@elsewhere.test', type: 'home' },
    ])
  })
})
