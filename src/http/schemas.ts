import { type TProperties, type TSchema, Type } from 'typebox'
import { ERROR_REASONS } from '../errors.js'

/**
 * The shared schema kit. A field's rules are declared here once; validation, static types and the
 * OpenAPI document all derive from these schemas.
 */

// No control characters (U+0000–U+001F, U+007F) anywhere…
const NO_CONTROL = '^[^\\u0000-\\u001F\\u007F]*$'
// …and a name holds at least one visible character (" " alone is not a name).
const NAME_PATTERN = '^[^\\u0000-\\u001F\\u007F]*[^\\s\\u0000-\\u001F\\u007F][^\\u0000-\\u001F\\u007F]*$'
// Descriptions may hold tab, CR and LF.
const DESCRIPTION_PATTERN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$'
const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'

export const LIMITS = {
  name: 255,
  description: 1000,
  email: 254,
  shortText: 255,
  listPage: 1000,
} as const

export const Uuid = (options: { description?: string } = {}) =>
  Type.String({ pattern: UUID_PATTERN, errorMessage: 'must be a UUID', ...options })

export const Timestamp = (options: { description?: string } = {}) =>
  Type.String({ format: 'date-time', ...options })

export const Name = (options: { description?: string } = {}) =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.name,
    pattern: NAME_PATTERN,
    errorMessage: `must be 1–${LIMITS.name} characters, not only spaces, without control characters`,
    ...options,
  })

export const Description = (options: { description?: string } = {}) =>
  Type.String({
    maxLength: LIMITS.description,
    pattern: DESCRIPTION_PATTERN,
    errorMessage: `must be at most ${LIMITS.description} characters without control characters`,
    ...options,
  })

/** Free text of a bounded length with no control characters (first names, external ids, …). */
export const ShortText = (options: { description?: string; maxLength?: number } = {}) =>
  Type.String({
    maxLength: LIMITS.shortText,
    pattern: NO_CONTROL,
    errorMessage: `must be at most ${options.maxLength ?? LIMITS.shortText} characters without control characters`,
    ...options,
  })

export const Email = (options: { description?: string } = {}) =>
  Type.String({
    maxLength: LIMITS.email,
    // One @, a dotted domain, no spaces or control characters: what a mail server will accept.
    pattern:
      '^[^\\s@\\u0000-\\u001F\\u007F]+@[^\\s@\\u0000-\\u001F\\u007F]+\\.[^\\s@\\u0000-\\u001F\\u007F]+$',
    errorMessage: `must be an e-mail address of at most ${LIMITS.email} characters`,
    ...options,
  })

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

/**
 * A request body object. Unknown fields are dropped by the validator (additionalProperties false with
 * removeAdditional), never stored and never an error (API.md §1).
 */
export const Body = <T extends TProperties>(
  properties: T,
  options: { description?: string; examples?: unknown[] } = {},
) => Type.Object(properties, { additionalProperties: false, ...options })

/** The `{"result": …}` envelope of API.md §1. */
export const Result = <T extends TSchema>(schema: T) => Type.Object({ result: schema })

export const ErrorReasonSchema = Type.Enum(Object.keys(ERROR_REASONS), {
  type: 'string',
  description: 'Stable identifier of the failure; the closed list of reasons.',
})

export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer({ description: 'The HTTP status.' }),
      reason: ErrorReasonSchema,
      message: Type.String(),
      attribute: Type.Optional(Type.Record(Type.String(), Type.String())),
      requestId: Type.Optional(Type.String()),
    }),
  },
  { $id: 'ErrorBody' },
)

export const IdParams = Type.Object({ id: Uuid() })
export const TenantParams = Type.Object({ tenantId: Uuid() })

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.listPage })),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
}
