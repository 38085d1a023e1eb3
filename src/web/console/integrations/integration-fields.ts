import type { SafeHtml } from '../../../html.js'
import {
  type IntegrationType,
  PROPERTY_SPECS,
  type PropertySpec,
} from '../../../modules/integrations/integration-types.js'
import { checkbox, type Errors, selectField, textArea, textField } from '../../kit/forms.js'

/**
 * An integration type's form fields, derived from the one declaration of its properties
 * (PROPERTY_SPECS, the same the API checks against): a text box per text, URL and port, a check-box per
 * flag, a choice list per choice, a JSON box per object, and a write-only box per secret. No type has a
 * hand-written form; a key added to the declaration appears here.
 */
export type FieldValues = Record<string, string | boolean>

/** The form's name of a property (an id, and what the API's `properties.<key>` errors are renamed to). */
export const fieldName = (key: string) => `prop-${key}`

const ACRONYMS = new Set([
  'url',
  'id',
  'sid',
  'smtp',
  'sftp',
  'ftp',
  'imap',
  'cti',
  'rta',
  'rtc',
  'api',
  'ssl',
])

/** "endpointPrefix" → "Endpoint prefix", "accountSid" → "Account SID": the key as a person reads it. */
export function labelOf(key: string): string {
  const words = key
    .split(/(?=[A-Z])/)
    .map((w) => w.toLowerCase())
    .map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : w))
  const first = words[0] ?? key
  return [first.charAt(0).toUpperCase() + first.slice(1), ...words.slice(1)].join(' ')
}

/** "serenova-voice" → "Serenova voice". */
export function typeLabel(type: string): string {
  const words = type.split('-').join(' ')
  return words.charAt(0).toUpperCase() + words.slice(1)
}

export function propertyLabels(type: IntegrationType): Record<string, string> {
  return Object.fromEntries(Object.keys(PROPERTY_SPECS[type]).map((key) => [fieldName(key), labelOf(key)]))
}

function hintOf(spec: PropertySpec): string | undefined {
  const needed = spec.required ? 'Needed to activate the integration.' : ''
  const what =
    spec.kind === 'url'
      ? `An ${spec.url.protocols.map((p) => p.slice(0, -1)).join(' or ')} address.`
      : spec.kind === 'port'
        ? 'A port number, 1–65535.'
        : spec.kind === 'object'
          ? 'A JSON object of names and values, for example {"timeout": 30}.'
          : ''
  return [what, needed].filter(Boolean).join(' ') || undefined
}

/**
 * One property's field. A secret's box is always empty: the page says whether a secret is set, and
 * typing one replaces it; left empty, the stored one stays. Its value is never in the page.
 */
function field(
  key: string,
  spec: PropertySpec,
  value: string | boolean | undefined,
  secretSet: boolean,
  errors: Errors | undefined,
): SafeHtml {
  const name = fieldName(key)
  const label = labelOf(key)
  const hint = hintOf(spec)
  if (spec.kind === 'flag')
    return checkbox({ name, label, checked: value === true, ...(hint ? { hint } : {}) })
  if (spec.kind === 'choice')
    return selectField({
      name,
      label,
      value: typeof value === 'string' ? value : '',
      errors,
      choices: [{ value: '', text: 'Not set' }, ...spec.choices.map((c) => ({ value: c, text: c }))],
    })
  if (spec.kind === 'object')
    return textArea({
      name,
      label,
      value: typeof value === 'string' ? value : '',
      errors,
      rows: 3,
      ...(hint ? { hint } : {}),
    })
  if (spec.kind === 'secret') {
    const state = secretSet
      ? 'A secret is set: it is never shown. Type a new one to replace it, or leave this empty to keep it.'
      : 'Not set.'
    return textField({
      name,
      label,
      type: 'password',
      autocomplete: 'new-password',
      errors,
      hint: [state, hint].filter(Boolean).join(' '),
    })
  }
  return textField({
    name,
    label,
    value: typeof value === 'string' ? value : '',
    errors,
    ...(hint ? { hint } : {}),
  })
}

/** Every property field of `type`, in the declaration's order. */
export function propertyFields(
  type: IntegrationType,
  values: FieldValues,
  secretsSet: Set<string>,
  errors: Errors | undefined,
): SafeHtml[] {
  return Object.entries(PROPERTY_SPECS[type]).map(([key, spec]) =>
    field(key, spec, values[key], secretsSet.has(key), errors),
  )
}

/** The stored properties as form values (secrets left out: they are never put in a form). */
export function fieldValuesOf(type: IntegrationType, properties: Record<string, unknown>): FieldValues {
  const values: FieldValues = {}
  for (const [key, spec] of Object.entries(PROPERTY_SPECS[type])) {
    const value = properties[key]
    if (spec.kind === 'secret') continue
    if (spec.kind === 'flag') values[key] = value === true
    else if (spec.kind === 'object')
      values[key] =
        value && typeof value === 'object' && Object.keys(value).length ? JSON.stringify(value) : ''
    else values[key] = typeof value === 'string' ? value : ''
  }
  return values
}

/**
 * A submitted form → the `properties` of the API call, and the values to draw the form again with. A
 * secret left empty is not sent (the stored one stays); a JSON box that is not an object is a form error.
 */
export function propertiesOf(
  type: IntegrationType,
  form: Record<string, unknown>,
): { properties: Record<string, unknown>; values: FieldValues; errors: Errors } {
  const properties: Record<string, unknown> = {}
  const values: FieldValues = {}
  const errors: Errors = {}
  for (const [key, spec] of Object.entries(PROPERTY_SPECS[type])) {
    const sent = form[fieldName(key)]
    const raw = typeof sent === 'string' ? sent : ''
    if (spec.kind === 'flag') {
      properties[key] = values[key] = sent === 'on'
    } else if (spec.kind === 'secret') {
      if (raw !== '') properties[key] = raw
    } else if (spec.kind === 'object') {
      values[key] = raw
      const parsed = parseObject(raw.trim())
      if (parsed === undefined) errors[fieldName(key)] = 'must be a JSON object, for example {"timeout": 30}'
      else properties[key] = parsed
    } else {
      properties[key] = values[key] = raw.trim()
    }
  }
  return { properties, values, errors }
}

function parseObject(raw: string): Record<string, unknown> | undefined {
  if (raw === '') return {}
  try {
    const parsed: unknown = JSON.parse(raw)
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The API's field errors on the form's fields: `properties.<key>` (or `attributes.properties.<key>`) is
 * that property's box; the activation refusal under `active` names the missing properties by label.
 */
export function integrationErrorsOf(attribute: Record<string, string>): Errors {
  const errors: Errors = {}
  for (const [path, reason] of Object.entries(attribute)) {
    const property = /^(?:attributes\.)?properties\.([A-Za-z]+)$/.exec(path)?.[1]
    const readable = reason.replace(/(?:attributes\.)?properties\.([A-Za-z]+)/g, (_m, key: string) =>
      labelOf(key),
    )
    errors[property ? fieldName(property) : path.replace(/^attributes\./, '')] = readable
  }
  return errors
}

export function secretKeysSet(type: IntegrationType, properties: Record<string, unknown>): Set<string> {
  return new Set(
    Object.entries(PROPERTY_SPECS[type])
      .filter(
        ([key, spec]) => spec.kind === 'secret' && properties[key] !== '' && properties[key] !== undefined,
      )
      .map(([key]) => key),
  )
}
