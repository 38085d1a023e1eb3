import { Ajv, type ErrorObject } from 'ajv'
import type { RegExpEngine } from 'ajv/dist/types/index.js'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import { AppError, type Attribute } from '../errors.js'

/**
 * Request validation with Ajv, the JSON Schema validator of the field. Bodies are taken as typed (no
 * coercion: "5" is not a number), unknown body fields are dropped; params and query strings are text on
 * the wire and are coerced. Every error lists each failing field in `attribute`.
 */

/**
 * Validation costs time linear in the input, whatever it is. Ajv checks every keyword of a field (all
 * errors are reported), so a pattern would run on a string far over its maxLength: every pattern must
 * come with a maxLength of at most MAX_PATTERNED_LENGTH (checked when a schema is compiled, so a route
 * that breaks the rule fails at start-up), and a pattern is never run on a string longer than twice that
 * (in UTF-16 units; a string that long already fails its maxLength, so the answer is the same). The
 * patterns themselves are written without ambiguity (schemas.ts).
 */
export const MAX_PATTERNED_LENGTH = 4_096
const MAX_PATTERN_INPUT = 2 * MAX_PATTERNED_LENGTH

const boundedRegExp: RegExpEngine = Object.assign(
  (source: string, flags: string) => {
    const regExp = new RegExp(source, flags)
    return {
      test: (text: string) => text.length <= MAX_PATTERN_INPUT && regExp.test(text),
      // Ajv keys its compiled patterns by this text.
      toString: () => regExp.toString(),
    }
  },
  { code: 'boundedRegExp' },
)

/** Throws when a schema has a pattern without a maxLength bound (see MAX_PATTERNED_LENGTH). */
export function assertBoundedPatterns(schema: unknown, path = '#', seen = new Set<unknown>()): void {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return
  seen.add(schema)
  const node = schema as { pattern?: unknown; maxLength?: unknown }
  if (node.pattern !== undefined) {
    if (typeof node.maxLength !== 'number' || node.maxLength > MAX_PATTERNED_LENGTH) {
      throw new Error(
        `Schema at ${path} has a pattern without a maxLength of at most ${MAX_PATTERNED_LENGTH}: ${String(node.pattern)}`,
      )
    }
  }
  for (const [key, value] of Object.entries(schema)) assertBoundedPatterns(value, `${path}/${key}`, seen)
}

function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    code: { regExp: boundedRegExp },
    allErrors: true,
    coerceTypes,
    removeAdditional: true,
    useDefaults: true,
    strict: false,
    verbose: true,
  })
  // `errorMessage` is our annotation: the human phrase for a failed pattern or bound.
  ajv.addKeyword({ keyword: 'errorMessage', schemaType: 'string' })
  ;(addFormats as unknown as (ajv: Ajv) => void)(ajv)
  return ajv
}

const bodyAjv = createAjv(false)
const textAjv = createAjv(true)

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv
  assertBoundedPatterns(schema, httpPart ?? '#')
  const validate = ajv.compile(schema as object)
  return (data: unknown) => {
    if (validate(data)) return { value: data }
    return { error: validationError(validate.errors ?? [], httpPart) }
  }
}

/**
 * A validator for one body schema, for input that does not arrive as a whole request body (bulk rows,
 * NDJSON lines). Same rules as request validation; returns the 400 or undefined. Defaults are applied and
 * unknown fields dropped in place, as for a body.
 */
export function compileBodyValidator(schema: object): (data: unknown) => AppError | undefined {
  assertBoundedPatterns(schema)
  const validate = bodyAjv.compile(schema)
  return (data) => (validate(data) ? undefined : validationError(validate.errors ?? [], 'body'))
}

/** Turns Ajv's errors into one 400 naming every field and what is wrong with it. */
export function validationError(errors: ErrorObject[], httpPart = 'body'): AppError {
  const attribute: Attribute = {}
  for (const error of errors) {
    // "must match the then/else schema" only sums up the field errors reported beside it.
    if (error.keyword === 'if') continue
    const field = fieldOf(error)
    if (attribute[field] !== undefined) continue
    attribute[field] = describe(error)
  }
  const fields = Object.keys(attribute)
  const where = httpPart === 'body' ? '' : ` in the ${httpPart === 'querystring' ? 'query string' : httpPart}`
  const message =
    fields.length === 0
      ? 'The request is invalid'
      : `Invalid ${fields.map((f) => `${f || httpPart} (${attribute[f]})`).join(', ')}${where}`
  return new AppError('validation_failed', message, attribute)
}

function fieldOf(error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (error.keyword === 'required') path.push(String(error.params.missingProperty))
  if (error.keyword === 'additionalProperties') path.push(String(error.params.additionalProperty))
  // Arrays read as items[3].email; objects as attributes.properties.token.
  return path.reduce(
    (acc, segment) => (/^\d+$/.test(segment) ? `${acc}[${segment}]` : acc ? `${acc}.${segment}` : segment),
    '',
  )
}

function describe(error: ErrorObject): string {
  const custom = (error.parentSchema as { errorMessage?: string } | undefined)?.errorMessage
  switch (error.keyword) {
    case 'required':
      return 'is required'
    case 'additionalProperties':
      return 'is not allowed'
    case 'type':
      return `must be ${article(String(error.params.type))}`
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    case 'const':
      return `must be ${JSON.stringify(error.params.allowedValue)}`
    case 'anyOf':
    case 'oneOf':
      return custom ?? 'has an invalid value'
    default:
      return custom ?? error.message ?? 'is invalid'
  }
}

function article(type: string): string {
  const words = type
    .split(',')
    .map((t) => (t === 'null' ? 'null' : /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`))
  return words.join(' or ')
}
