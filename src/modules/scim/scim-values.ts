import { type AttributeDef, findAttribute, findSchema, type ResourceDef } from './scim-attributes.js'
import { invalidValue, ScimError } from './scim-error.js'

/**
 * What a directory sends → what is stored, by the attribute definitions (scim-attributes.ts). Attribute
 * names match case-insensitively and are stored under their defined spelling; values are checked against
 * their type; unknown and read-only attributes (`password`, `groups`, `roles`, `meta`, `id`, unknown
 * schema URIs) are ignored (docs/scim.md). Strings obey the bounds of docs/api.md#conventions (400 `invalidValue`).
 */

export type Stored = Record<string, unknown>

const MAX_STRING = 1024
const MAX_VALUES = 100
// Control characters other than tab, CR and LF (addresses may be formatted on several lines).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/

/** `"True"` / `"False"` as booleans too: Entra ID sends them so (docs/scim.md). */
export function toBoolean(value: unknown, where: string): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase()
    if (lower === 'true') return true
    if (lower === 'false') return false
  }
  throw invalidValue(`${where} must be a boolean`)
}

function toText(value: unknown, where: string): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (typeof value !== 'string') throw invalidValue(`${where} must be a string`)
  if (value.length > MAX_STRING) throw invalidValue(`${where} is longer than ${MAX_STRING} characters`)
  if (CONTROL.test(value)) throw invalidValue(`${where} holds a control character`)
  return value
}

/** One value of an attribute (not a whole multi-valued list); undefined when it carries nothing. */
export function coerceSingle(def: AttributeDef, value: unknown, where: string): unknown {
  if (value === null || value === undefined) return undefined
  switch (def.type) {
    case 'boolean':
      return toBoolean(value, where)
    case 'string':
    case 'reference':
      return toText(value, where)
    case 'complex': {
      // `manager` as a bare id means {value} (docs/scim.md), and so does any bare string for a complex value.
      const object = typeof value === 'string' ? { value } : value
      if (typeof object !== 'object' || Array.isArray(object))
        throw invalidValue(`${where} must be an object`)
      const out: Stored = {}
      for (const [key, sub] of Object.entries(object as Record<string, unknown>)) {
        const subDef = findAttribute(def.subAttributes, key)
        if (!subDef || subDef.mutability === 'readOnly') continue
        const coerced = coerceSingle(subDef, sub, `${where}.${subDef.name}`)
        if (coerced !== undefined) out[subDef.name] = coerced
      }
      return Object.keys(out).length > 0 ? out : undefined
    }
  }
}

/** A whole attribute value: a list for a multi-valued attribute (a lone value is taken as a list of one). */
export function coerceValue(def: AttributeDef, value: unknown, where = def.name): unknown {
  if (!def.multiValued) return coerceSingle(def, value, where)
  if (value === null || value === undefined) return undefined
  const list = Array.isArray(value) ? value : [value]
  if (list.length > MAX_VALUES) throw invalidValue(`${where} holds more than ${MAX_VALUES} values`)
  const out = list
    .map((item, i) => coerceSingle(def, item, `${where}[${i}]`))
    .filter((item) => item !== undefined)
  return out.length > 0 ? out : undefined
}

/** Where a top-level key of a resource (or a path-less PATCH value) points: a schema and an attribute. */
export interface KeyTarget {
  /** undefined: the core schema. */
  extension?: string
  def?: AttributeDef
  /** `externalId`, a common attribute. */
  common?: 'externalId' | 'active'
  /** The rest of a dotted key: `name.givenName` → `givenName`. */
  sub?: string
}

/** A key: `attr`, `attr.sub`, `urn:…:attr[.sub]` or an extension URI (its whole object). */
export function targetOf(resource: ResourceDef, key: string): KeyTarget | undefined {
  let schemaId: string | undefined
  let rest = key
  if (key.toLowerCase().startsWith('urn:')) {
    const schema = findSchema(resource, key)
    if (schema) return schema === resource.core ? undefined : { extension: schema.id }
    const owner = [resource.core, ...resource.extensions].find((s) =>
      key.toLowerCase().startsWith(`${s.id.toLowerCase()}:`),
    )
    if (!owner) return undefined
    schemaId = owner === resource.core ? undefined : owner.id
    rest = key.slice(owner.id.length + 1)
  }
  const [name, sub] = splitDot(rest)
  if (!schemaId && name.toLowerCase() === 'externalid' && sub === undefined) return { common: 'externalId' }
  const schema = schemaId ? findSchema(resource, schemaId) : resource.core
  const def = findAttribute(schema?.attributes, name)
  if (!def) return undefined
  return {
    ...(schemaId ? { extension: schemaId } : {}),
    def,
    ...(sub !== undefined ? { sub } : {}),
  }
}

function splitDot(path: string): [string, string | undefined] {
  const dot = path.indexOf('.')
  return dot < 0 ? [path, undefined] : [path.slice(0, dot), path.slice(dot + 1)]
}

/** The object of a schema inside a stored resource (core: the resource itself), made when asked. */
export function schemaObject(
  stored: Stored,
  extension: string | undefined,
  create: boolean,
): Stored | undefined {
  if (!extension) return stored
  const existing = stored[extension]
  if (existing && typeof existing === 'object') return existing as Stored
  if (!create) return undefined
  const made: Stored = {}
  stored[extension] = made
  return made
}

/**
 * A whole resource (POST, PUT) → its stored form: every writable attribute it names, nothing else.
 * `active` is returned apart (it lives on the membership, not in the stored attributes).
 */
export function readResource(resource: ResourceDef, body: unknown): { stored: Stored; active?: boolean } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ScimError(400, 'The request body must be a JSON object', 'invalidSyntax')
  }
  const stored: Stored = {}
  let active: boolean | undefined
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    const target = targetOf(resource, key)
    if (!target) continue
    if (target.extension && !target.def) {
      if (!value || typeof value !== 'object' || Array.isArray(value)) continue
      const schema = findSchema(resource, target.extension)
      for (const [extKey, extValue] of Object.entries(value as Record<string, unknown>)) {
        const def = findAttribute(schema?.attributes, extKey)
        if (!def || def.mutability === 'readOnly') continue
        const coerced = coerceValue(def, extValue)
        if (coerced !== undefined)
          (schemaObject(stored, target.extension, true) as Stored)[def.name] = coerced
      }
      continue
    }
    if (target.common === 'externalId') {
      if (value !== null && value !== undefined)
        stored.externalId = coerceSingle(EXTERNAL_ID, value, 'externalId')
      continue
    }
    const def = target.def as AttributeDef
    if (def.mutability === 'readOnly') continue
    if (def.name === 'active' && !target.extension) {
      if (value !== null && value !== undefined) active = toBoolean(value, 'active')
      continue
    }
    if (target.sub !== undefined && def.type === 'complex' && !def.multiValued) {
      const subDef = findAttribute(def.subAttributes, target.sub)
      if (!subDef) continue
      const subValue = coerceSingle(subDef, value, `${def.name}.${subDef.name}`)
      const holder = schemaObject(stored, target.extension, true) as Stored
      const current = (holder[def.name] as Stored | undefined) ?? {}
      if (subValue !== undefined) holder[def.name] = { ...current, [subDef.name]: subValue }
      continue
    }
    if (target.sub !== undefined) continue
    const coerced = coerceValue(def, value)
    if (coerced !== undefined) (schemaObject(stored, target.extension, true) as Stored)[def.name] = coerced
  }
  return active === undefined ? { stored } : { stored, active }
}

export const EXTERNAL_ID: AttributeDef = {
  name: 'externalId',
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: true,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  description: 'The directory’s own id of the resource (per tenant)',
}
