import type { NewUserRow } from '../../db/schema.js'

/**
 * Separates the rows' changes in the one text that carries them (bulk.repository.ts splits it with
 * `string_to_table`). JSON text never holds it: a control character inside a JSON string is escaped.
 */
export const CHANGES_SEPARATOR = '\u001e'

/**
 * The `changes` of bulk rows' `user.created` events (docs/webhooks.md, "Bulk loads"), the form
 * user-audit.ts `userCreatedRecord` gives a single create: every profile field, status and roles as
 * [null, value], a null value kept, no password (bulk rows carry none). test/modules/audit/audit-bulk.test.ts
 * holds a bulk row's event equal to a single create's.
 *
 * Built here rather than by the statement from the row it stored: `jsonb_build_object` over the inserted
 * row made the database look up the type of each of its 27 arguments, row after row (docs/performance.md,
 * "Bulk load"). The text is the stored row's: text columns store what is sent, and the uuids are the
 * lower-case canonical form the rules produce (user-rules.ts lower-cases every validated role id), which
 * is how PostgreSQL prints a uuid.
 *
 * The rows' JSON texts travel as one text, CHANGES_SEPARATOR between them, each cast to jsonb on its own:
 * splitting it costs the database less than reading an array literal (whose quotes would each need
 * escaping), and one parse of the whole batch as a single jsonb value would build it all in memory first.
 */
export function userCreatedChanges(rows: readonly NewUserRow[]): string {
  const texts = new Array<string>(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    texts[i] =
      `{"email":[null,${text(row.email)}],"firstName":[null,${text(row.first_name ?? '')}],` +
      `"lastName":[null,${text(row.last_name ?? '')}],"externalId":[null,${text(row.external_id ?? '')}],` +
      `"personalTelephone":[null,${textOrNull(row.personal_telephone ?? null)}],` +
      `"defaultTenant":[null,${textOrNull(row.default_tenant ?? null)}],"status":[null,${text(row.status)}],` +
      `"roleId":[null,${text(row.role_id)}],"additionalRoleIds":[null,${textList(row.additional_role_ids ?? [])}]}`
  }
  return texts.join(CHANGES_SEPARATOR)
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/

/**
 * A string as JSON text. A string with no quote, backslash, control character or surrogate is quoted as
 * it is. Others go through JSON.stringify — after the round trip through UTF-8 that the database drivers
 * make of every text they send, so that a lone surrogate becomes U+FFFD here exactly as in the users row
 * (JSON.stringify would write it as an escape that jsonb refuses).
 */
function text(value: string): string {
  if (PLAIN.test(value)) return `"${value}"`
  return JSON.stringify(Buffer.from(value, 'utf8').toString('utf8'))
}

function textOrNull(value: string | null): string {
  return value === null ? 'null' : text(value)
}

function textList(values: readonly string[]): string {
  return `[${values.map(text).join(',')}]`
}
