/**
 * The columns of a CSV of platform users (docs/api.md#bulk-load-of-platform-users), as `tenantry users import` and the console's import
 * read them: one column per create-user body field.
 */

/**
 * The body fields a CSV column may name. Headers match ignoring case, spaces, dashes and underscores, so
 * `email`, `E-mail`, `first_name` and `First Name` all work.
 */
const FIELDS = [
  'email',
  'roleId',
  'firstName',
  'lastName',
  'externalId',
  'status',
  'personalTelephone',
  'additionalRoleIds',
  'tenantId',
  'tenantRoleId',
  'tenantStatus',
] as const
const FIELD_BY_KEY = new Map<string, string>(FIELDS.map((f) => [headerKey(f), f]))
FIELD_BY_KEY.set('mail', 'email')

function headerKey(header: string): string {
  return header.toLowerCase().replace(/[\s_\-.]/g, '')
}

export interface CsvColumns {
  /** Column header → body field; headers that name no field are left out (and reported). */
  fields: Map<string, string>
  unknown: string[]
}

export function mapCsvHeaders(headers: string[]): CsvColumns {
  const fields = new Map<string, string>()
  const unknown: string[] = []
  for (const header of headers) {
    const field = FIELD_BY_KEY.get(headerKey(header))
    if (field) fields.set(header, field)
    else if (header.trim() !== '') unknown.push(header)
  }
  return { fields, unknown }
}

/**
 * A CSV record as a create-user body: empty cells are left out (so defaults apply), and
 * `additionalRoleIds` is a list separated by `;`, `,`, `|` or spaces.
 */
export function csvRecordToUser(
  record: Record<string, string>,
  columns: CsvColumns,
  defaults: { roleId?: string | undefined },
): Record<string, unknown> {
  const user: Record<string, unknown> = {}
  for (const [header, field] of columns.fields) {
    const value = record[header]?.trim()
    if (value === undefined || value === '') continue
    user[field] = field === 'additionalRoleIds' ? value.split(/[;,|\s]+/).filter(Boolean) : value
  }
  if (user.roleId === undefined && defaults.roleId !== undefined) user.roleId = defaults.roleId
  return user
}
