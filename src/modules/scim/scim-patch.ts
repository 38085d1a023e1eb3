import {
  type AttributeDef,
  findAttribute,
  findSchema,
  PATCH_SCHEMA,
  type ResourceDef,
} from './scim-attributes.js'
import { invalidPath, invalidValue, ScimError } from './scim-error.js'
import { type Filter, matches, parseFilter } from './scim-filter.js'
import {
  coerceSingle,
  coerceValue,
  EXTERNAL_ID,
  type Stored,
  schemaObject,
  targetOf,
  toBoolean,
} from './scim-values.js'

/**
 * PATCH (RFC 7644 §3.5.2) as Okta and Entra ID send it (API.md §16): `op` in any case; paths `attr`,
 * `attr.sub`, URN-qualified, `attr[filter]`, `attr[filter].sub`; path-less values with dotted or
 * URN-qualified keys (an `id` inside is ignored); booleans as "True"/"False"; `remove members` with a
 * value list; add or replace on `emails[type eq "work"].value` creates the entry when absent. The
 * operations work on a copy: the caller stores the result only when every one of them applied.
 */

export const MAX_OPERATIONS = 1000

export interface Patchable {
  stored: Stored
  /** undefined: never set (or removed). */
  active: boolean | undefined
}

type Op = 'add' | 'replace' | 'remove'

interface Target {
  extension?: string
  def?: AttributeDef
  common?: 'externalId' | 'active'
  valueFilter?: Filter
  sub?: string
}

/** The operations of a PatchOp body, checked for shape and count before any is applied. */
export function readOperations(body: unknown): { op: Op; path?: string; value?: unknown }[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ScimError(400, 'The request body must be a PatchOp object', 'invalidSyntax')
  }
  const { Operations: operations, schemas } = body as { Operations?: unknown; schemas?: unknown }
  if (
    Array.isArray(schemas) &&
    !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === PATCH_SCHEMA.toLowerCase())
  ) {
    throw new ScimError(400, `schemas must name ${PATCH_SCHEMA}`, 'invalidSyntax')
  }
  if (!Array.isArray(operations) || operations.length === 0) {
    throw new ScimError(400, 'Operations must be a non-empty array', 'invalidSyntax')
  }
  if (operations.length > MAX_OPERATIONS) {
    throw new ScimError(400, `A PATCH holds at most ${MAX_OPERATIONS} operations`, 'tooMany')
  }
  return operations.map((raw, i) => {
    if (!raw || typeof raw !== 'object')
      throw new ScimError(400, `Operations[${i}] must be an object`, 'invalidSyntax')
    const { op, path, value } = raw as { op?: unknown; path?: unknown; value?: unknown }
    const lower = typeof op === 'string' ? op.toLowerCase() : ''
    if (lower !== 'add' && lower !== 'replace' && lower !== 'remove') {
      throw new ScimError(400, `Operations[${i}].op must be add, replace or remove`, 'invalidSyntax')
    }
    if (path !== undefined && path !== null && typeof path !== 'string')
      throw invalidPath(`Operations[${i}].path must be a string`)
    return {
      op: lower,
      ...(typeof path === 'string' && path !== '' ? { path } : {}),
      ...(value !== undefined ? { value } : {}),
    }
  })
}

/** Applies every operation to a copy of `current`; throws (and nothing is kept) when one cannot apply. */
export function applyPatch(
  resource: ResourceDef,
  current: Patchable,
  operations: { op: Op; path?: string; value?: unknown }[],
): Patchable {
  const next: Patchable = { stored: structuredClone(current.stored), active: current.active }
  for (const { op, path, value } of operations) {
    if (path === undefined) {
      if (op === 'remove') throw new ScimError(400, 'remove needs a path', 'noTarget')
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        throw invalidValue(`A path-less ${op} needs an object value`)
      }
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        const target = targetOf(resource, key)
        if (!target) continue
        if (target.extension && !target.def) {
          applyExtension(resource, next, op, target.extension, item)
          continue
        }
        apply(next, op, withSub(target), item)
      }
      continue
    }
    const target = parsePath(resource, path)
    if (target.extension && !target.def) applyExtension(resource, next, op, target.extension, value)
    else apply(next, op, target, value)
  }
  return next
}

/** An operation on a whole extension (its URI as the path or key): each attribute of the value in turn. */
function applyExtension(
  resource: ResourceDef,
  next: Patchable,
  op: Op,
  extension: string,
  value: unknown,
): void {
  if (op === 'remove') {
    delete next.stored[extension]
    return
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidValue(`${extension} takes an object value`)
  }
  const schema = findSchema(resource, extension)
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const def = findAttribute(schema?.attributes, key)
    if (def) apply(next, op, { extension, def }, item)
  }
}

function withSub(target: ReturnType<typeof targetOf> & object): Target {
  const out: Target = {}
  if (target.extension) out.extension = target.extension
  if (target.def) out.def = target.def
  if (target.common) out.common = target.common
  if (target.sub !== undefined) out.sub = target.sub
  return out
}

/** `attr`, `attr.sub`, `urn:…:attr[.sub]`, `attr[filter]`, `attr[filter].sub`. */
export function parsePath(resource: ResourceDef, path: string): Target {
  if (path.length > 1024) throw invalidPath('The path is longer than 1024 characters')
  const open = path.indexOf('[')
  if (open < 0) {
    const target = targetOf(resource, path)
    if (!target) throw invalidPath(`"${path}" is not an attribute of this resource`)
    if (target.sub !== undefined && target.def && !findAttribute(target.def.subAttributes, target.sub)) {
      throw invalidPath(`"${path}" is not an attribute of this resource`)
    }
    return withSub(target)
  }
  const close = path.lastIndexOf(']')
  if (close < open) throw invalidPath(`"${path}": a "[" is not closed`)
  const target = targetOf(resource, path.slice(0, open))
  if (!target?.def?.multiValued || target.sub !== undefined) {
    throw invalidPath(`"${path}": a filter applies only to a multi-valued attribute`)
  }
  const after = path.slice(close + 1)
  let sub: string | undefined
  if (after !== '') {
    if (!after.startsWith('.')) throw invalidPath(`"${path}" is not an attribute path`)
    const subDef = findAttribute(target.def.subAttributes, after.slice(1))
    if (!subDef) throw invalidPath(`"${path}": no sub-attribute "${after.slice(1)}"`)
    sub = subDef.name
  }
  let valueFilter: Filter
  try {
    valueFilter = parseFilter(path.slice(open + 1, close))
  } catch (error) {
    throw invalidPath(`"${path}": ${(error as Error).message}`)
  }
  return {
    ...(target.extension ? { extension: target.extension } : {}),
    def: target.def,
    valueFilter,
    ...(sub ? { sub } : {}),
  }
}

function lowerKeys(element: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (element && typeof element === 'object') {
    for (const [k, v] of Object.entries(element)) out[k.toLowerCase()] = v
  }
  return out
}

function same(a: unknown, b: unknown): boolean {
  const va = (a as Stored | undefined)?.value
  const vb = (b as Stored | undefined)?.value
  if (typeof va === 'string' && typeof vb === 'string') return va.toLowerCase() === vb.toLowerCase()
  return JSON.stringify(a) === JSON.stringify(b)
}

function apply(next: Patchable, op: Op, target: Target, value: unknown): void {
  if (target.common === 'externalId') {
    if (op === 'remove' || value === null) delete next.stored.externalId
    else next.stored.externalId = coerceSingle(EXTERNAL_ID, value, 'externalId')
    return
  }
  const def = target.def as AttributeDef
  if (def.mutability === 'readOnly') return
  if (def.name === 'active' && !target.extension) {
    next.active = op === 'remove' || value === null ? undefined : toBoolean(value, 'active')
    return
  }
  const holder = schemaObject(next.stored, target.extension, op !== 'remove')
  if (!holder) return
  const name = def.name
  if (target.valueFilter) {
    applyFiltered(holder, op, def, target.valueFilter, target.sub, value)
    return
  }

  if (target.sub !== undefined) {
    const subDef = findAttribute(def.subAttributes, target.sub) as AttributeDef
    if (def.multiValued) {
      const list = (holder[name] as Stored[] | undefined) ?? []
      if (op === 'remove') for (const el of list) delete el[subDef.name]
      else {
        const coerced = coerceSingle(subDef, value, `${name}.${subDef.name}`)
        if (list.length === 0 && coerced !== undefined) holder[name] = [{ [subDef.name]: coerced }]
        else for (const el of list) if (coerced !== undefined) el[subDef.name] = coerced
      }
      return
    }
    const object = (holder[name] as Stored | undefined) ?? {}
    if (op === 'remove' || value === null) delete object[subDef.name]
    else {
      const coerced = coerceSingle(subDef, value, `${name}.${subDef.name}`)
      if (coerced !== undefined) object[subDef.name] = coerced
    }
    if (Object.keys(object).length > 0) holder[name] = object
    else delete holder[name]
    return
  }

  if (op === 'remove') {
    if (def.required) throw new ScimError(400, `${name} is required and cannot be removed`, 'mutability')
    // `remove members` with a value list removes those members (Entra ID, API.md §16).
    if (def.multiValued && value !== undefined && value !== null) {
      const gone = (Array.isArray(value) ? value : [value]).map((v) =>
        typeof v === 'string' ? { value: v } : v,
      )
      const list = (holder[name] as Stored[] | undefined) ?? []
      const kept = list.filter((el) => !gone.some((g) => same(el, g)))
      if (kept.length > 0) holder[name] = kept
      else delete holder[name]
      return
    }
    delete holder[name]
    return
  }
  const coerced = coerceValue(def, value)
  if (coerced === undefined) {
    if (op === 'replace' && !def.required) delete holder[name]
    return
  }
  if (def.multiValued) {
    const list = op === 'add' ? [...((holder[name] as Stored[] | undefined) ?? [])] : []
    for (const item of coerced as unknown[]) if (!list.some((el) => same(el, item))) list.push(item as Stored)
    holder[name] = list
  } else if (def.type === 'complex') {
    holder[name] = { ...((holder[name] as Stored | undefined) ?? {}), ...(coerced as Stored) }
  } else {
    holder[name] = coerced
  }
}

function applyFiltered(
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
    return op === 'replace' ? { ...el, ...(coerced ?? {}) } : { ...el, ...(coerced ?? {}) }
  })
  if (!found) {
    // `emails[type eq "work"].value`: the entry the filter describes is made (API.md §16).
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
