import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox'
import { ERROR_REASONS } from '../errors.js'

/**
 * The shared schema kit. A field's rules are declared here once; validation, static types and the
 * OpenAPI document all derive from these schemas.
 */

// Every pattern here runs in time linear in its input: no two parts of a pattern can match the same
// character where the engine would have to try both (V8's engine backtracks, so an ambiguous pattern
// such as `^[^c]*[^\sc][^c]*$` costs the square of the length on a string it refuses). validation.ts
// also refuses to compile a pattern without a maxLength, and never runs one on a longer string.
const CONTROL = '\\u0000-\\u001F\\u007F'
// No control characters (U+0000–U+001F, U+007F) anywhere…
const NO_CONTROL = `^[^${CONTROL}]*$`
/**
 * A character that draws nothing by itself (docs/console.md "Names on links"): white space and separators
 * (\s, \p{Z}), control, format, private-use and unassigned code points (\p{C}: U+200B ZERO WIDTH SPACE,
 * U+2060 WORD JOINER, U+FEFF, the bidi marks), combining marks without a base (\p{M}), and the blank
 * "letters" U+115F, U+1160, U+3164, U+FFA0 (Hangul fillers) and U+2800 (Braille blank). A pattern class
 * for the validator, which compiles patterns as Unicode (the `u` flag); the console's names on links use
 * the same one (web/console/kit/readable.ts).
 */
export const INVISIBLE_CHARACTER = '[\\s\\p{Z}\\p{C}\\p{M}\\u115F\\u1160\\u3164\\uFFA0\\u2800]'
// …and a name holds at least one visible character: neither " " nor U+200B alone is a name, so a link
// or a heading naming the record is never empty. The look-ahead scans the invisible characters before the
// first visible one, once: time linear in the name, as the rest.
const NAME_PATTERN = `^(?!${INVISIBLE_CHARACTER}*$)[^${CONTROL}]*$`
// Descriptions may hold tab, CR and LF.
const DESCRIPTION_PATTERN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$'
const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
// One @, a dotted domain, no spaces or control characters: what a mail server will accept. The domain is
// a first character, then no dot until the dot that must have a character after it — the same strings as
// `[^…]+\.[^…]+` (a dot somewhere after the first character and before the last), without its ambiguity.
const EMAIL_CHAR = `[^\\s@${CONTROL}]`
const EMAIL_CHAR_NOT_DOT = `[^\\s@.${CONTROL}]`
const EMAIL_PATTERN = `^${EMAIL_CHAR}+@${EMAIL_CHAR}${EMAIL_CHAR_NOT_DOT}*\\.${EMAIL_CHAR}+$`

export const LIMITS = {
  name: 255,
  description: 1000,
  email: 254,
  shortText: 255,
  listPage: 1000,
} as const

export const Uuid = (options: { description?: string } = {}) =>
  Type.String({
    maxLength: 36,
    pattern: UUID_PATTERN,
    errorMessage: 'must be a UUID',
    examples: ['0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f'],
    ...options,
  })

export const Timestamp = (options: { description?: string } = {}) =>
  Type.String({ format: 'date-time', examples: ['2026-11-22T10:15:00Z'], ...options })

export const Name = (options: { description?: string } = {}) =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.name,
    pattern: NAME_PATTERN,
    errorMessage: `must be 1–${LIMITS.name} characters, at least one of them visible (not only spaces or invisible characters), without control characters`,
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
    pattern: EMAIL_PATTERN,
    errorMessage: `must be an e-mail address of at most ${LIMITS.email} characters`,
    examples: ['jane.doe@acme.example'],
    ...options,
  })

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

/**
 * Requirements that depend on the body itself (JSON Schema `if`/`then`/`else`), e.g. "type and properties,
 * unless the attributes wrapper holds them". Their subschemas name fields only (`required`, and
 * `properties` without additionalProperties), so the validator never drops a field while trying them.
 */
export interface Conditions {
  if?: object
  then?: object
  else?: object
}

/**
 * A request body object. Unknown fields are dropped by the validator (additionalProperties false with
 * removeAdditional), never stored and never an error (docs/api.md#conventions); the published document leaves
 * additionalProperties out of request bodies (openapi.ts), since unknown fields are accepted. `examples`
 * (type-checked against the body) fill the docs page's sample request.
 */
export const Body = <T extends TProperties>(
  properties: T,
  options: { description?: string; examples?: Static<TObject<T>>[] } & Conditions = {},
) => Type.Object(properties, { additionalProperties: false, ...options })

/** The `{"result": …}` envelope of docs/api.md#conventions. */
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
      mfa: Type.Optional(
        Type.Object(
          {
            token: Type.String({ description: 'Single use, 5 minutes, bound to the account' }),
            factors: Type.Array(
              Type.Union([Type.Literal('totp'), Type.Literal('webauthn'), Type.Literal('recovery')]),
            ),
            webauthn: Type.Optional(
              Type.Record(Type.String(), Type.Unknown(), {
                description: 'WebAuthn request options (JSON form), when the account has a passkey',
              }),
            ),
          },
          {
            description:
              'With mfa_required and reauthentication_required: the challenge to answer with POST /v1/tokens/mfa or /v1/tokens/step-up',
          },
        ),
      ),
    }),
  },
  {
    $id: 'ErrorBody',
    examples: [
      {
        error: {
          code: 409,
          reason: 'tenant_name_taken',
          message: 'A tenant named "Acme" already exists',
          attribute: { name: 'already exists' },
          requestId: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
        },
      },
    ],
  },
)

export const IdParams = Type.Object({ id: Uuid() })
export const TenantParams = Type.Object({ tenantId: Uuid() })

export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: LIMITS.listPage,
      description: 'Page size; turns on pagination (the response gains nextCursor while more remain)',
      examples: [100],
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      maxLength: 512,
      description: 'The nextCursor of the previous page',
      examples: ['0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f'],
    }),
  ),
}
