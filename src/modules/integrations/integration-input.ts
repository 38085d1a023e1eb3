import { AppError, type Attribute } from '../../errors.js'
import { displayName } from '../tenants/tenant-name.js'
import {
  activationProblem,
  checkProperties,
  completeProperties,
  missingForActivation,
} from './integration-properties.js'
import {
  INTEGRATION_TYPES,
  type IntegrationType,
  isSecretKey,
  normalizeType,
  type PlainProperties,
  SECRET_MASK,
} from './integration-types.js'
import type { CreateIntegrationBody, UpdateIntegrationBody } from './integrations.schemas.js'

/**
 * Request bodies → checked, normalised input. Both spellings of a body (the brief's `attributes` wrapper
 * and the flat fields) end here, and every problem is reported under the path the client used, e.g.
 * `attributes.properties.foo` or `properties.foo`, all in one 400. Nothing is stored before this passes.
 */
/**
 * Where an activation refused for missing properties is reported: `attribute.active`, whether the body
 * was flat or wrapped in `attributes` (docs/api.md#integrations "Incomplete while inactive"; the UI reads this key).
 */
export const ACTIVATION_ATTRIBUTE = 'active'

export interface NewIntegrationInput {
  type: IntegrationType
  name: string
  description: string | null
  active: boolean
  /** Every key of the type, defaults filled in, secrets in plaintext. */
  properties: PlainProperties
}

export interface IntegrationChanges {
  name?: string
  description?: string | null
  active?: boolean
  /** Only the keys sent; a secret sent as SECRET_MASK is left out (it keeps the stored value). */
  properties?: PlainProperties
}

export function readCreateBody(body: CreateIntegrationBody | undefined): NewIntegrationInput {
  const wrapped = body?.attributes !== undefined
  const source = (wrapped ? body?.attributes : body) ?? {}
  const prefix = wrapped ? 'attributes.' : ''
  const problems: Attribute = {}
  const { type: sentType, properties } = source as Partial<NonNullable<CreateIntegrationBody['attributes']>>
  // `type` is matched ignoring case and stored lower-case (docs/api.md#integrations).
  const type = normalizeType(sentType)
  if (type === undefined) {
    problems[`${prefix}type`] =
      `${sentType === undefined ? 'is required' : 'is not a known type'} (one of ${INTEGRATION_TYPES.join(', ')})`
  }
  if (properties === undefined) problems[`${prefix}properties`] = 'is required'
  if (type === undefined || properties === undefined) throw invalidFields(problems)

  const path = `${prefix}properties`
  const given = checkProperties(type, properties, path, problems)
  for (const [key, value] of Object.entries(given)) {
    if (isSecretKey(type, key) && value === SECRET_MASK) {
      problems[`${path}.${key}`] = `is the placeholder reads show for a stored secret; send the secret itself`
    }
  }
  const complete = completeProperties(type, given)
  const active = source.active === undefined ? false : toBoolean(source.active)
  // Incomplete while inactive (docs/api.md#integrations): only an active integration needs its required properties.
  // The refusal is `attribute.active` in every spelling of the body (the existing UI reads that key).
  const missing = active ? missingForActivation(type, complete, given) : []
  if (missing.length > 0) problems[ACTIVATION_ATTRIBUTE] = activationProblem(missing, path)
  if (Object.keys(problems).length > 0) throw invalidFields(problems)

  return {
    type,
    // The samples name an integration after its type; that is the default.
    name: displayName(source.name ?? type),
    description: source.description ?? null,
    active,
    properties: complete,
  }
}

/**
 * A partial update of an integration of `type`. The rules across keys are checked later, on the merge
 * with the stored properties (see checkMergedProperties).
 */
export function readUpdateBody(
  body: UpdateIntegrationBody | undefined,
  type: IntegrationType,
): IntegrationChanges & { propertiesPath: string; activePath: string } {
  const wrapped = body?.attributes !== undefined
  const source = (wrapped ? body?.attributes : body) ?? {}
  const prefix = wrapped ? 'attributes.' : ''
  const propertiesPath = `${prefix}properties`
  const problems: Attribute = {}
  const changes: IntegrationChanges & { propertiesPath: string; activePath: string } = {
    propertiesPath,
    activePath: ACTIVATION_ATTRIBUTE,
  }
  if (source.name !== undefined) changes.name = displayName(source.name)
  if (source.description !== undefined) changes.description = source.description
  if (source.active !== undefined) changes.active = toBoolean(source.active)
  if (source.properties !== undefined) {
    const given = checkProperties(type, source.properties, propertiesPath, problems)
    changes.properties = Object.fromEntries(
      Object.entries(given).filter(([key, value]) => !(isSecretKey(type, key) && value === SECRET_MASK)),
    )
  }
  if (Object.keys(problems).length > 0) throw invalidFields(problems)
  return changes
}

/**
 * An update that leaves the integration active needs every required property (docs/api.md#integrations): the check
 * runs on the properties the update would leave, and a refusal names what is missing under `active`.
 */
export function checkActivation(
  type: IntegrationType,
  active: boolean,
  merged: Record<string, unknown>,
  paths: { active: string; properties: string },
): void {
  if (!active) return
  const missing = missingForActivation(type, merged)
  if (missing.length > 0)
    throw invalidFields({ [paths.active]: activationProblem(missing, paths.properties) })
}

function toBoolean(value: boolean | 'true' | 'false'): boolean {
  return value === true || value === 'true'
}

/** One 400 naming every field and what is wrong with it (never the value: it may be a secret). */
function invalidFields(problems: Attribute): AppError {
  const message = `Invalid ${Object.entries(problems)
    .map(([field, problem]) => `${field} (${problem})`)
    .join(', ')}`
  return new AppError('validation_failed', message, problems)
}
