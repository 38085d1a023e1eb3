import { parse } from 'csv-parse/sync'
import { MAX_BULK_ITEMS } from '../../../modules/bulk/bulk.schemas.js'
import { csvRecordToUser, mapCsvHeaders } from '../../../modules/bulk/csv-columns.js'

/**
 * The console's CSV import reads the columns of `tenantry users import` (modules/bulk/csv-columns.ts) and
 * sends the rows as one JSON array to `POST /v1/users` — `?dryRun=true` for the preview, then for real.
 * Its bounds are those of that array: at most 1,000 rows (the API's MAX_BULK_ITEMS; a larger file is what
 * the CLI's NDJSON stream is for), and 256 KiB of CSV, which holds 1,000 rows of every column with room to
 * spare and keeps the array — twice the CSV at worst, once every quote is escaped — under the API's 1 MiB
 * body limit. The preview page carries the CSV on to the import, so this also bounds that page.
 */
export const MAX_IMPORT_ROWS = MAX_BULK_ITEMS
export const MAX_IMPORT_BYTES = 256 * 1024

export interface ImportRow {
  /** The line of the CSV where the row ends (the header is line 1). */
  line: number
  email: string
  body: Record<string, unknown>
}

export interface ImportCsv {
  rows: ImportRow[]
  /** Body field → the CSV header that named it, to name a row's failing field as the file does. */
  headerOf: Map<string, string>
  /** Headers that name no field: left out, and said so. */
  unknown: string[]
}

/** The CSV as rows to send, or why it cannot be read (the reason completes "CSV …"). */
export function readImportCsv(text: string, defaultRoleId: string): ImportCsv | { error: string } {
  if (text.trim() === '') return { error: 'is empty: choose a file or paste the rows' }
  if (Buffer.byteLength(text) > MAX_IMPORT_BYTES) {
    return {
      error: `is larger than 256 KB: import it in parts, or with the command-line tool (tenantry users import), which has no limit`,
    }
  }
  let columns = mapCsvHeaders([])
  let records: { record: Record<string, string>; info: { lines: number } }[]
  try {
    records = parse(text, {
      bom: true,
      columns: (headers: string[]) => {
        columns = mapCsvHeaders(headers)
        return headers
      },
      info: true,
      skip_empty_lines: true,
      relax_column_count: true,
    }) as unknown as typeof records
  } catch (error) {
    return { error: `could not be read: ${(error as Error).message}` }
  }
  if (records.length === 0) return { error: 'has no rows under its header line' }
  if (records.length > MAX_IMPORT_ROWS) {
    return {
      error: `has ${records.length.toLocaleString('en-US')} rows; the console imports at most ${MAX_IMPORT_ROWS.toLocaleString('en-US')} at a time: import it in parts, or with the command-line tool (tenantry users import)`,
    }
  }
  const headerOf = new Map([...columns.fields].map(([header, field]) => [field, header]))
  const defaults = { roleId: defaultRoleId || undefined }
  const rows = records.map(({ record, info }) => {
    const body = csvRecordToUser(record, columns, defaults)
    return { line: info.lines, email: typeof body.email === 'string' ? body.email : '', body }
  })
  return { rows, headerOf, unknown: columns.unknown }
}
