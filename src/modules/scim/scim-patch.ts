import {
  type AttributeDef,
  findAttribute,
  findSchema,
  PATCH_SCHEMA,
  type ResourceDef,
} from './scim-attributes.js'
import { invalidPath, invalidValue, ScimError } from './scim-error.js'
import { type Filter, parseFilter } from './scim-filter.js'
import { applyFiltered, type Op } from './scim-patch-filtered.js'
import { distinct, OpenLists } from './scim-patch-lists.js'
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
 * PATCH (RFC 7644 §3.5.2) as Okta and Entra ID send it (docs/scim.md): `op` in any case; paths `attr`,
 * `attr.sub`, URN-qualified, `attr[filter]`, `attr[filter].sub`; path-less values with dotted or
 * URN-qualified keys (an `id` inside is ignored); booleans as "True"/"False"; `remove members` with a
 * value list; add or replace on `emails[type eq "work"].value` creates the entry when absent. The
 * operations work on a copy: the caller stores the result only when every one of them applied. Adding
 * and removing by value take time linear in the values sent and held (scim-patch-lists.ts).
 */

export const MAX_OPERATIONS = 1000

export interface Patchable {
  stored: Stored
  /** undefined: never set (or removed). */
  active: boolean | undefined
}

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
  const lists = new OpenLists()
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
          applyExtension(resource, next, lists, op, target.extension, item)
          continue
        }
        apply(next, lists, op, withSub(target), item)
      }
      continue
    }
    const target = parsePath(resource, path)
    if (target.extension && !target.def) applyExtension(resource, next, lists, op, target.extension, value)
    else apply(next, lists, op, target, value)
  }
  lists.closeAll()
  return next
}

/** An operation on a whole extension (its URI as the path or key): each attribute of the value in turn. */
function applyExtension(
  resource: ResourceDef,
  next: Patchable,
  lists: OpenLists,
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
    if (def) apply(next, lists, op, { extension, def }, item)
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

function apply(next: Patchable, lists: OpenLists, op: Op, target: Target, value: unknown): void {
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
  if (def.multiValued && isByValue(op, target, value)) {
    applyByValue(lists, holder, def, op, value)
    return
  }
  // Any other operation reads or replaces the attribute as stored: an open list is written back first.
  lists.close(holder, name)
  if (target.valueFilter) {
    applyFiltered(holder, op, def, target.valueFilter, target.sub, value)
    return
  }

  if (target.sub !== undefined) {
    applyToSub(holder, def, target.sub, op, value)
    return
  }

  if (op === 'remove') {
    if (def.required) throw new ScimError(400, `${name} is required and cannot be removed`, 'mutability')
    delete holder[name]
    return
  }
  const coerced = coerceValue(def, value)
  if (coerced === undefined) {
    if (op === 'replace' && !def.required) delete holder[name]
    return
  }
  if (def.multiValued) {
    // replace: the values sent, each once.
    holder[name] = distinct(coerced as Stored[])
  } else if (def.type === 'complex') {
    holder[name] = { ...((holder[name] as Stored | undefined) ?? {}), ...(coerced as Stored) }
  } else {
    holder[name] = coerced
  }
}

/** An operation on a sub-attribute of every value (multi-valued) or of the one object: `name.sub`. */
function applyToSub(holder: Stored, def: AttributeDef, sub: string, op: Op, value: unknown): void {
  const name = def.name
  const subDef = findAttribute(def.subAttributes, sub) as AttributeDef
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
}

/**
 * Whether an operation on a multi-valued attribute adds or removes by value: `add` of values, or `remove`
 * with a value list (`remove members` with the members to remove, docs/scim.md) — not through a filter
 * or a sub-attribute.
 */
function isByValue(op: Op, target: Target, value: unknown): boolean {
  if (target.valueFilter || target.sub !== undefined) return false
  if (op === 'add') return true
  return op === 'remove' && value !== undefined && value !== null
}

/** Adds (each once) or removes the values sent, on the attribute's open list (scim-patch-lists.ts). */
function applyByValue(lists: OpenLists, holder: Stored, def: AttributeDef, op: Op, value: unknown): void {
  if (op === 'remove') {
    if (def.required) throw new ScimError(400, `${def.name} is required and cannot be removed`, 'mutability')
    const list = lists.of(holder, def.name)
    for (const v of Array.isArray(value) ? value : [value])
      list.remove(typeof v === 'string' ? { value: v } : v)
    return
  }
  const coerced = coerceValue(def, value) as Stored[] | undefined
  if (coerced === undefined) return
  const list = lists.of(holder, def.name)
  for (const item of coerced) list.add(item)
}
