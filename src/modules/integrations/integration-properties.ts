import type { Attribute } from '../../errors.js'
import {
  type DialParams,
  type IntegrationType,
  OBJECT_MAX_KEYS,
  type PlainProperties,
  type PlainValue,
  PROPERTY_MAX_LENGTH,
  PROPERTY_SPECS,
  type PropertySpec,
  type UrlRule,
} from './integration-types.js'

/**
 * Checks of integration properties against the catalogue of integration-types.ts: each value by its
 * kind, the defaults of a create, and what an active integration must have (docs/api.md#integrations).
 */

// No control characters (U+0000–U+001F, U+007F), as for every other string of the API.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001F\u007F]/

/**
 * Checks the given keys against the type and converts flags to booleans. Problems are collected under
 * `${path}.${key}` so that one 400 names every bad key. Secrets may be SECRET_MASK here; whether the mask
 * is allowed is the caller's decision (update: keep; create: refuse).
 */
export function checkProperties(
  type: IntegrationType,
  given: Record<string, unknown>,
  path: string,
  problems: Attribute,
): PlainProperties {
  const specs = PROPERTY_SPECS[type]
  const values: PlainProperties = {}
  for (const [key, value] of Object.entries(given)) {
    // Own keys only: "constructor" or "toString" must not find Object.prototype's members.
    const spec = Object.hasOwn(specs, key) ? specs[key] : undefined
    const field = `${path}.${key}`
    if (!spec) {
      problems[field] =
        `is not a property of a ${type} integration (allowed: ${Object.keys(specs).join(', ')})`
      continue
    }
    const checked = checkValue(spec, value)
    if (isProblem(checked)) problems[field] = checked.problem
    else values[key] = checked
  }
  return values
}

/** The problem objects checkValue returns: told apart from an object value by identity. */
const PROBLEMS = new WeakSet<object>()
function problem(text: string): { problem: string } {
  const found = { problem: text }
  PROBLEMS.add(found)
  return found
}

function checkValue(spec: PropertySpec, sent: unknown): PlainValue | { problem: string } {
  // A port may come as a number; it is stored as the string the other keys are.
  const value = spec.kind === 'port' && typeof sent === 'number' ? String(sent) : sent
  if (spec.kind === 'flag') {
    // Like `active`, flags are accepted as the strings the brief's samples use.
    if (typeof value === 'boolean') return value
    if (value === 'true' || value === 'false') return value === 'true'
    return problem('must be a boolean (or "true"/"false")')
  }
  if (spec.kind === 'object') return checkObject(value)
  if (typeof value !== 'string') return problem('must be a string')
  if (value.length > PROPERTY_MAX_LENGTH) return problem(`must be at most ${PROPERTY_MAX_LENGTH} characters`)
  if (CONTROL.test(value)) return problem('must not contain control characters')
  if (spec.kind === 'url') return checkUrl(spec.url, value) ?? value
  if (spec.kind === 'port' && value !== '' && !isPort(value)) return problem('must be a port number, 1–65535')
  if (spec.kind === 'choice' && value !== '' && !spec.choices.includes(value.toLowerCase())) {
    return problem(`must be one of ${spec.choices.join(', ')} (or "")`)
  }
  return spec.kind === 'choice' ? value.toLowerCase() : value
}

function checkUrl(rule: UrlRule, value: string): { problem: string } | undefined {
  if (value === '') return undefined
  const expected = `must be an ${rule.protocols.map((p) => p.slice(0, -1)).join(' or ')} URL or ""`
  if (value !== value.trim()) return problem(expected)
  try {
    const parsed = new URL(value)
    if (!rule.protocols.includes(parsed.protocol) || parsed.hostname === '') return problem(expected)
  } catch {
    return problem(expected)
  }
  return undefined
}

function isProblem(value: PlainValue | { problem: string }): value is { problem: string } {
  return typeof value === 'object' && PROBLEMS.has(value)
}

function isPort(value: string): boolean {
  return /^[0-9]{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= 65_535
}

function checkObject(value: unknown): DialParams | { problem: string } {
  const invalid = problem(`must be an object of at most ${OBJECT_MAX_KEYS} strings, numbers or booleans`)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid
  const entries = Object.entries(value)
  if (entries.length > OBJECT_MAX_KEYS) return invalid
  for (const [key, item] of entries) {
    if (key.length > 255 || CONTROL.test(key)) return invalid
    if (typeof item === 'string' && (item.length > PROPERTY_MAX_LENGTH || CONTROL.test(item))) return invalid
    if (typeof item === 'number' && !Number.isFinite(item)) return invalid
    if (!['string', 'number', 'boolean'].includes(typeof item)) return invalid
  }
  return Object.fromEntries(entries) as DialParams
}

/** The default of a key left out on create: false for flags, {} for objects, "" for everything else. */
function defaultOf(spec: PropertySpec): PlainValue {
  if (spec.kind === 'flag') return false
  return spec.kind === 'object' ? {} : ''
}

/** Every key of the type: the given values and defaults for the rest (required ones too: see below). */
export function completeProperties(type: IntegrationType, values: PlainProperties): PlainProperties {
  const complete: PlainProperties = {}
  for (const [key, spec] of Object.entries(PROPERTY_SPECS[type]))
    complete[key] = values[key] ?? defaultOf(spec)
  return complete
}

/**
 * What an active integration of `type` lacks (docs/api.md#integrations): the required keys that are empty, and the
 * rules across keys. `given` tells a required flag left out (on create) from one set to false.
 */
export function missingForActivation(
  type: IntegrationType,
  complete: Record<string, unknown>,
  given?: Record<string, unknown>,
): string[] {
  const missing: string[] = []
  for (const [key, spec] of Object.entries(PROPERTY_SPECS[type])) {
    if (!spec.required) continue
    const value = complete[key]
    const absent = spec.kind === 'flag' ? given !== undefined && given[key] === undefined : isEmpty(value)
    if (absent) missing.push(key)
  }
  if (type === 'zendesk' && complete.workItems === true && isEmpty(complete.interactionFieldId)) {
    missing.push('interactionFieldId (required when workItems is true)')
  }
  if (type === 'serenova-voice' && isEmpty(complete.accountSid) && isEmpty(complete.accountId)) {
    missing.push('accountSid or accountId')
  }
  return missing
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === ''
}

/** The 400 for turning on an incomplete integration: `active` names what is missing. */
export function activationProblem(missing: string[], path: string): string {
  return `cannot be true while these properties are empty: ${missing.map((m) => `${path}.${m}`).join(', ')}`
}
