import { type AttributeDef, findAttribute } from './scim-attributes.js'
import { ScimError } from './scim-error.js'
import { type Filter, matches } from './scim-filter.js'
import { coerceSingle, type Stored } from './scim-values.js'

/**
 * PATCH on `attr[filter]` and `attr[filter].sub` (scim-patch.ts): the elements the value filter matches
 * are changed or removed; an add or replace that matches nothing makes the element an `eq`-only filter
 * describes (`emails[type eq "work"].value`, docs/scim.md).
 */

export type Op = 'add' | 'replace' | 'remove'

export function lowerKeys(element: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (element && typeof element === 'object') {
    for (const [k, v] of Object.entries(element)) out[k.toLowerCase()] = v
  }
  return out
}

export function applyFiltered(
  holder: Stored,
  op: Op,
  def: AttributeDef,
  filter: Filter,
  sub: string | undefined,
  value: unknown,
): void {
  const list = ((holder[def.name] as Stored[] | undefined) ?? []).slice()
  const hit = (el: Stored) => matches(lowerKeys(el), filter, true)
  if (op === 'remove') {
    const kept = sub ? list.map((el) => (hit(el) ? withoutKey(el, sub) : el)) : list.filter((el) => !hit(el))
    if (kept.length > 0) holder[def.name] = kept
    else delete holder[def.name]
    return
  }
  let found = false
  const updated = list.map((el) => {
    if (!hit(el)) return el
    found = true
    if (sub) {
      const subDef = findAttribute(def.subAttributes, sub) as AttributeDef
      const coerced = coerceSingle(subDef, value, `${def.name}.${sub}`)
      return coerced === undefined ? withoutKey(el, sub) : { ...el, [subDef.name]: coerced }
    }
    const coerced = coerceSingle(def, value, def.name) as Stored | undefined
    return { ...el, ...(coerced ?? {}) }
  })
  if (!found) {
    // `emails[type eq "work"].value`: the entry the filter describes is made (docs/scim.md).
    const seed = seedFrom(def, filter)
    if (!seed) throw new ScimError(400, `No value of ${def.name} matches the filter`, 'noTarget')
    const coerced = sub
      ? coerceSingle(findAttribute(def.subAttributes, sub) as AttributeDef, value, `${def.name}.${sub}`)
      : coerceSingle(def, value, def.name)
    if (coerced === undefined) return
    updated.push(sub ? { ...seed, [sub]: coerced } : { ...seed, ...(coerced as Stored) })
  }
  holder[def.name] = updated
}

/** The element an `eq`-only filter describes: `type eq "work"` → {type: "work"}. */
function seedFrom(def: AttributeDef, filter: Filter): Stored | undefined {
  const seed: Stored = {}
  for (const c of filter) {
    if (c.op !== 'eq' || c.sub !== undefined || c.valueFilter) return undefined
    const subDef = findAttribute(def.subAttributes, c.attr)
    if (!subDef) return undefined
    seed[subDef.name] = c.value
  }
  return seed
}

function withoutKey(el: Stored, key: string): Stored {
  const copy = { ...el }
  delete copy[key]
  return copy
}
