import type { Readable } from 'node:stream'
import { AppError } from '../../http/errors.js'
import type { BulkSummary } from './bulk.schemas.js'
import type { BulkUserLoader, PendingRow, RowOutcome } from './bulk-loader.js'
import { MAX_LINE_BYTES, type NdjsonLine, ndjsonLines } from './ndjson.js'

/**
 * Rows a statement. The first batch is small so that the first answers come back at once; each next
 * batch doubles, up to a size at which a round trip and a commit per batch cost little next to the rows,
 * while a batch (and its answer) still weighs a few megabytes and an interrupted load loses at most one
 * batch of work.
 */
export const FIRST_BATCH_ROWS = 250
export const STREAM_BATCH_ROWS = 500

export interface StreamLineSerializers {
  result(line: RowOutcome & { line: number }): string
  summary(line: { summary: BulkSummary }): string
}

/** A line's item, or the error that makes it that line's failure (not the request's). */
function parseLine(line: NdjsonLine): unknown {
  if (line.tooLong) {
    return new AppError('payload_too_large', `Line ${line.lineNumber} is longer than ${MAX_LINE_BYTES} bytes`)
  }
  try {
    return JSON.parse(line.text)
  } catch {
    return new AppError('invalid_json', `Line ${line.lineNumber} is not valid JSON`)
  }
}

/**
 * Batches being written at once, at most. Two keep the database busy while this process turns one
 * batch's rows into answers and reads the next: the server database has a connection for each; the
 * embedded one simply takes them in turn. Answers still go out in input order.
 */
export const BATCHES_IN_FLIGHT = 2

/**
 * The NDJSON form (API.md §7): reads the body line by line, writes batches, and yields the answer one
 * chunk per batch — a result line per input line, then the summary line. It is pulled by the response:
 * while the client is not reading answers, nothing more is read from the request, so memory stays at a
 * few batches whatever the length of the stream.
 */
export async function* streamBulkLoad(
  body: Readable,
  loader: BulkUserLoader,
  serialize: StreamLineSerializers,
): AsyncGenerator<string> {
  let batch: PendingRow[] = []
  let lineNumbers: number[] = []
  const inFlight: { written: Promise<RowOutcome[]>; lineNumbers: number[] }[] = []
  let index = 0
  let batchRows = FIRST_BATCH_ROWS

  // One string per batch, joined at once (appending line by line leaves a chain to flatten later).
  const answer = (outcomes: RowOutcome[], numbers: number[]) => {
    const lines = new Array<string>(outcomes.length + 1)
    for (let i = 0; i < outcomes.length; i++) {
      // The outcome is this answer's own object: giving it its line number costs no copy.
      lines[i] = serialize.result(Object.assign(outcomes[i]!, { line: numbers[i]! }))
    }
    lines[outcomes.length] = ''
    return lines.join('\n')
  }
  const launch = () => {
    const written = loader.write(batch)
    // Awaited in turn below; until then a rejection must not count as unhandled.
    written.catch(() => {})
    inFlight.push({ written, lineNumbers })
    batch = []
    lineNumbers = []
  }

  for await (const line of ndjsonLines(body)) {
    const prepared = loader.prepare(index, parseLine(line))
    batch.push(prepared instanceof Promise ? await prepared : prepared)
    lineNumbers.push(line.lineNumber)
    index += 1
    if (batch.length >= batchRows) {
      batchRows = Math.min(batchRows * 2, STREAM_BATCH_ROWS)
      if (inFlight.length < BATCHES_IN_FLIGHT) {
        launch()
        continue
      }
      // The oldest batch is done: the next one takes its place before its answer is sent.
      const oldest = inFlight.shift()!
      const outcomes = await oldest.written
      launch()
      yield answer(outcomes, oldest.lineNumbers)
    }
  }
  if (batch.length > 0) launch()
  for (const pending of inFlight) yield answer(await pending.written, pending.lineNumbers)
  yield `${serialize.summary({ summary: loader.summary() })}\n`
}
