import type { NewUserRow } from '../../db/schema.js'

/**
 * The `changes` of bulk rows' `user.created` events (docs/webhooks.md, "Bulk loads"), the form
 * user-audit.ts `userCreatedRecord` gives a single create: every profile field, status and roles as
 * [null, value], a null value kept, no password (bulk rows carry none). test/api/audit/audit-bulk.test.ts
 * holds a bulk row's event equal to a single create's.
 *
 * Built here rather than by the statement from the row it stored: `jsonb_build_object` over the inserted
 * row made the database look up the type of each of its 27 arguments, row after row (docs/performance.md,
 * "Bulk load"). The text is the stored row's: text columns store what is sent, and the uuids are the
 * lower-case canonical form the rules produce (user-rules.ts lower-cases every validated role id), which
 * is how PostgreSQL prints a uuid.
 *
 * The rows' changes travel as one PostgreSQL array literal of JSON texts, each cast to jsonb on its own
 * (one parse of the whole batch as a single jsonb value would build it all in memory first). So each
 * JSON text is written here already escaped for the literal: a quote inside the JSON is `\"`, a backslash
 * `\\` — the template's own quotes are written escaped, and a value is escaped only when it holds one.
 */
export function userCreatedChangesLiteral(rows: readonly NewUserRow[]): string {
  const elements = new Array<string>(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    elements[i] =
      `"{\\"email\\":[null,${text(row.email)}],\\"firstName\\":[null,${text(row.first_name ?? '')}],` +
      `\\"lastName\\":[null,${text(row.last_name ?? '')}],\\"externalId\\":[null,${text(row.external_id ?? '')}],` +
      `\\"personalTelephone\\":[null,${textOrNull(row.personal_telephone ?? null)}],` +
      `\\"defaultTenant\\":[null,${textOrNull(row.default_tenant ?? null)}],` +
      `\\"status\\":[null,${text(row.status)}],\\"roleId\\":[null,${text(row.role_id)}],` +
      `\\"additionalRoleIds\\":[null,${textList(row.additional_role_ids ?? [])}]}"`
  }
  return `{${elements.join(',')}}`
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/
const LITERAL_SPECIAL = /["\\]/g

/**
 * A string as JSON text, escaped for the array literal. A string with no quote, backslash, control
 * character or surrogate is quoted as it is. Others go through JSON.stringify — after the round trip
 * through UTF-8 that the database drivers make of every text they send, so that a lone surrogate becomes
 * U+FFFD here exactly as in the users row (JSON.stringify would write it as an escape jsonb refuses).
 */
function text(value: string): string {
  if (PLAIN.test(value)) return `\\"${value}\\"`
  return JSON.stringify(Buffer.from(value, 'utf8').toString('utf8')).replace(LITERAL_SPECIAL, '\\$&')
}

function textOrNull(value: string | null): string {
  return value === null ? 'null' : text(value)
}

function textList(values: readonly string[]): string {
  return `[${values.map(text).join(',')}]`
}
