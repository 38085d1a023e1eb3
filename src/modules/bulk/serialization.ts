import type { TSchema } from 'typebox'
import type { User } from '../users/users.schemas.js'

type Json = { [key: string]: unknown }

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean'])

/**
 * The same response schema for the serializer, with each nullable scalar (`anyOf: [X, null]`, how
 * TypeBox spells Nullable) written as `type: [X, 'null']`. The fields — the allow-list — are unchanged;
 * the serializer just stops trying each branch of the union per value, which matters at a hundred
 * thousand answers a request.
 */
export function withNullableScalars<T extends TSchema>(schema: T): T {
  return rewrite(schema) as T
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite)
  if (node === null || typeof node !== 'object') return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) out[key] = rewrite(value)
  const branches = out.anyOf
  if (!Array.isArray(branches) || branches.length !== 2) return out
  const nullBranch = branches.find((b: Json) => b.type === 'null')
  const other = branches.find((b: Json) => b !== nullBranch) as Json | undefined
  if (!nullBranch || !other || typeof other.type !== 'string' || !SCALAR_TYPES.has(other.type)) return out
  const { anyOf: _anyOf, ...rest } = out
  return { ...rest, ...other, type: [other.type, 'null'] }
}

/**
 * A string as JSON text. Most strings of an answer need no escaping (no quote, backslash, control
 * character or lone surrogate): those are quoted as they are; the rest go through JSON.stringify, which
 * escapes exactly what JSON requires.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/
const text = (value: string): string => (PLAIN.test(value) ? `"${value}"` : JSON.stringify(value))
const textOrNull = (value: string | null): string => (value === null ? 'null' : text(value))

/**
 * A field whose value repeats row after row (the batch's creation time, the creator, the role): the
 * JSON of the last value seen, reused while the value is the same string.
 */
class Repeated {
  #value: string | null | undefined
  #json = ''
  of(value: string | null): string {
    if (value !== this.#value) {
      this.#value = value
      this.#json = textOrNull(value)
    }
    return this.#json
  }
}

function textList(values: readonly string[]): string {
  if (values.length === 0) return '[]'
  let out = `[${text(values[0]!)}`
  for (let i = 1; i < values.length; i++) out += `,${text(values[i]!)}`
  return `${out}]`
}

/**
 * Answer lines of created rows (BulkResultLine with its user), written field by field. The same
 * allow-list as the schema — every field of UserSchema, in the schema's order, nothing else — and the
 * same text as the schema's compiled serializer (a test holds the two to it), for less: that serializer
 * checks each value's type and tries each branch of every nullable field, while here the types are
 * known, and values shared by a whole batch are turned into JSON once. One line a row makes this the
 * hottest code of a bulk load. One writer per stream (it remembers the last values it wrote).
 */
export class CreatedRowLines {
  readonly #roleId = new Repeated()
  readonly #status = new Repeated()
  readonly #defaultTenant = new Repeated()
  readonly #reset = new Repeated()
  readonly #createdBy = new Repeated()
  readonly #updatedBy = new Repeated()
  readonly #created = new Repeated()
  readonly #updated = new Repeated()

  line(index: number, line: number, user: User): string {
    return (
      `{"index":${index},"line":${line},"status":201,"result":{` +
      `"id":${text(user.id)},"email":${text(user.email)},"roleId":${this.#roleId.of(user.roleId)},` +
      `"additionalRoleIds":${textList(user.additionalRoleIds)},` +
      `"firstName":${text(user.firstName)},"lastName":${text(user.lastName)},` +
      `"externalId":${text(user.externalId)},"personalTelephone":${textOrNull(user.personalTelephone)},` +
      `"status":${this.#status.of(user.status)},"aliasPlatformUserId":${text(user.aliasPlatformUserId)},` +
      `"defaultTenant":${this.#defaultTenant.of(user.defaultTenant)},"hasPassword":${user.hasPassword},` +
      `"resetPasswordExpiryDate":${this.#reset.of(user.resetPasswordExpiryDate)},` +
      // A user just created has no reset link, hence no reset mail.
      `"resetPasswordEmailStatus":${textOrNull(user.resetPasswordEmailStatus)},` +
      `"createdBy":${this.#createdBy.of(user.createdBy)},"updatedBy":${this.#updatedBy.of(user.updatedBy)},` +
      `"created":${this.#created.of(user.created)},"updated":${this.#updated.of(user.updated)}}}`
    )
  }
}
