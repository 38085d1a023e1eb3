import { createReadStream } from 'node:fs'
import { parse } from 'csv-parse'
import { type CsvColumns, csvRecordToUser, mapCsvHeaders } from '../modules/bulk/csv-columns.js'
import { ndjsonLines } from '../modules/bulk/ndjson.js'

/** One user row read from the import file. */
export interface SourceRow {
  /** Line number in the file (the line where a CSV record ends), from 1. */
  line: number
  /** What the report shows as the row's input: the CSV record, or the NDJSON line (parsed if it parses). */
  input: unknown
  /** The row as one NDJSON line for the server, without the newline. */
  text: string
  /** A row that cannot be sent at all fails here, with this message, and is not sent. */
  localError?: string
}

export type SourceFormat = 'csv' | 'ndjson'

export function formatOf(file: string, given: string | undefined): SourceFormat | undefined {
  if (given !== undefined) return given === 'csv' || given === 'ndjson' ? given : undefined
  if (/\.csv$/i.test(file)) return 'csv'
  if (/\.(ndjson|jsonl)$/i.test(file)) return 'ndjson'
  return undefined
}

export interface ReadSourceOptions {
  format: SourceFormat
  roleId?: string | undefined
  /** Told once, before the first row, which CSV headers name no field. */
  onUnknownColumns?: (headers: string[]) => void
}

/** The rows of the file, read as a stream: the file is never held in memory. */
export async function* readSource(file: string, options: ReadSourceOptions): AsyncGenerator<SourceRow> {
  if (options.format === 'ndjson') {
    for await (const line of ndjsonLines(createReadStream(file))) {
      if (line.tooLong) {
        // Never read into memory: it fails here, as the server would fail it.
        yield {
          line: line.lineNumber,
          input: null,
          text: '',
          localError: `Line ${line.lineNumber} is too long`,
        }
        continue
      }
      let input: unknown = line.text
      try {
        input = JSON.parse(line.text)
      } catch {
        // Sent as it is: the server answers this line's invalid_json.
      }
      yield { line: line.lineNumber, input, text: line.text }
    }
    return
  }

  let columns: CsvColumns | undefined
  const parser = createReadStream(file).pipe(
    parse({
      bom: true,
      columns: (headers: string[]) => {
        columns = mapCsvHeaders(headers)
        if (columns.unknown.length > 0) options.onUnknownColumns?.(columns.unknown)
        return headers
      },
      info: true,
      skip_empty_lines: true,
      relax_column_count: true,
    }),
  )
  for await (const { record, info } of parser as AsyncIterable<{
    record: Record<string, string>
    info: { lines: number }
  }>) {
    const user = csvRecordToUser(record, columns!, { roleId: options.roleId })
    yield { line: info.lines, input: record, text: JSON.stringify(user) }
  }
}

/** Rows in the file, counted cheaply from its newlines, for the progress bar's total. */
export async function estimateRows(file: string, format: SourceFormat): Promise<number> {
  let newlines = 0
  let last = 10
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let at = chunk.indexOf(10)
    while (at !== -1) {
      newlines += 1
      at = chunk.indexOf(10, at + 1)
    }
    if (chunk.length > 0) last = chunk[chunk.length - 1]!
  }
  const lines = newlines + (last === 10 ? 0 : 1)
  return Math.max(0, format === 'csv' ? lines - 1 : lines)
}
