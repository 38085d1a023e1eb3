import type { Attribute } from '../../errors.js'

/**
 * The integration types and the keys of their `properties` (SPEC §2.4, API.md §4.5), declared once: the
 * request checks, the defaults, which keys are secrets and the OpenAPI description all come from here.
 */
export const INTEGRATION_TYPES = ['salesforce', 'zendesk', 'rest'] as const
export type IntegrationType = (typeof INTEGRATION_TYPES)[number]

/** What reads answer in place of a stored secret; sent back on update it keeps the stored value. */
export const SECRET_MASK = '********'

/** Property strings are credentials, ids and addresses: generous, but bounded. */
export const PROPERTY_MAX_LENGTH = 2048

type UrlRule = { protocols: readonly string[]; allowEmpty: boolean }

export type PropertySpec =
  | { kind: 'text' }
  | { kind: 'secret' }
  | { kind: 'url'; url: UrlRule }
  | { kind: 'flag'; required: boolean }

const text: PropertySpec = { kind: 'text' }
const secret: PropertySpec = { kind: 'secret' }
const url = (protocols: readonly string[], allowEmpty: boolean): PropertySpec => ({
  kind: 'url',
  url: { protocols, allowEmpty },
})
const flag = (required: boolean): PropertySpec => ({ kind: 'flag', required })

export const PROPERTY_SPECS: Record<IntegrationType, Record<string, PropertySpec>> = {
  salesforce: {
    consumerKey: text,
    consumerSecret: secret,
    password: secret,
    securityToken: secret,
    username: text,
    loginUrl: url(['https:'], true),
    pushEnabled: flag(false),
  },
  zendesk: {
    // An https address is required: a ticketing integration without an endpoint cannot work.
    endpointPrefix: url(['https:'], false),
    interactionFieldId: text,
    password: secret,
    username: text,
    workItems: flag(true),
  },
  rest: {
    endpointPrefix: url(['http:', 'https:'], true),
    password: secret,
    token: secret,
    username: text,
  },
}

/** Plain property values: strings, and booleans for flags. */
export type PlainProperties = Record<string, string | boolean>

export function isIntegrationType(value: unknown): value is IntegrationType {
  return typeof value === 'string' && (INTEGRATION_TYPES as readonly string[]).includes(value)
}

export function isSecretKey(type: IntegrationType, key: string): boolean {
  return Object.hasOwn(PROPERTY_SPECS[type], key) && PROPERTY_SPECS[type][key]?.kind === 'secret'
}

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
    if (typeof checked === 'object') problems[field] = checked.problem
    else values[key] = checked
  }
  return values
}

function checkValue(spec: PropertySpec, value: unknown): string | boolean | { problem: string } {
  if (spec.kind === 'flag') {
    // Like `active`, flags are accepted as the strings the brief's samples use.
    if (typeof value === 'boolean') return value
    if (value === 'true' || value === 'false') return value === 'true'
    return { problem: 'must be a boolean (or "true"/"false")' }
  }
  if (typeof value !== 'string') return { problem: 'must be a string' }
  if (value.length > PROPERTY_MAX_LENGTH)
    return { problem: `must be at most ${PROPERTY_MAX_LENGTH} characters` }
  if (CONTROL.test(value)) return { problem: 'must not contain control characters' }
  if (spec.kind === 'url') return checkUrl(spec.url, value) ?? value
  return value
}

function checkUrl(rule: UrlRule, value: string): { problem: string } | undefined {
  if (value === '' && rule.allowEmpty) return undefined
  const expected = `must be an ${rule.protocols.map((p) => p.slice(0, -1)).join(' or ')} URL${rule.allowEmpty ? ' or ""' : ''}`
  if (value !== value.trim()) return { problem: expected }
  try {
    const parsed = new URL(value)
    if (!rule.protocols.includes(parsed.protocol) || parsed.hostname === '') return { problem: expected }
  } catch {
    return { problem: expected }
  }
  return undefined
}

/** The default of a key left out on create: false for flags, "" for everything else. */
function defaultOf(spec: PropertySpec): string | boolean {
  return spec.kind === 'flag' ? false : ''
}

/** Every key of the type: the given values, defaults for the rest; keys with no usable default are required. */
export function completeProperties(
  type: IntegrationType,
  values: PlainProperties,
  path: string,
  problems: Attribute,
): PlainProperties {
  const complete: PlainProperties = {}
  for (const [key, spec] of Object.entries(PROPERTY_SPECS[type])) {
    const value = values[key]
    if (value !== undefined) complete[key] = value
    else if (isRequired(spec)) problems[`${path}.${key}`] ??= 'is required'
    else complete[key] = defaultOf(spec)
  }
  return complete
}

function isRequired(spec: PropertySpec): boolean {
  return (spec.kind === 'flag' && spec.required) || (spec.kind === 'url' && !spec.url.allowEmpty)
}

/** Rules across keys, checked on the complete set (after defaults on create, after the merge on update). */
export function checkPropertyRules(
  type: IntegrationType,
  complete: Record<string, unknown>,
  path: string,
  problems: Attribute,
): void {
  if (type === 'zendesk' && complete.workItems === true && !complete.interactionFieldId) {
    problems[`${path}.interactionFieldId`] ??= 'is required when workItems is true'
  }
}

/** For the OpenAPI document: the keys of each type. */
export function describePropertyKeys(): string {
  return INTEGRATION_TYPES.map((type) => {
    const keys = Object.entries(PROPERTY_SPECS[type]).map(([key, spec]) => {
      if (spec.kind === 'secret') return `${key} (secret)`
      if (spec.kind === 'flag') return `${key} (boolean${spec.required ? ', required' : ', default false'})`
      if (spec.kind === 'url')
        return `${key} (${spec.url.protocols.map((p) => p.slice(0, -1)).join('/')} URL${spec.url.allowEmpty ? ' or ""' : ', required'})`
      return key
    })
    return `${type}: ${keys.join(', ')}`
  }).join('; ')
}
