import type { Readable } from 'node:stream'
import { AppError } from '../../errors.js'
import { nestsDeeperThan, tooDeep } from '../../http/json-body.js'
import type { BulkSummary } from './bulk.schemas.js'
import type { BulkUserLoader, PendingRow, RowOutcome } from './bulk-loader.js'
import { MAX_LINE_BYTES, type NdjsonLine, ndjsonLineChunks } from './ndjson.js'
import { CreatedRowLines } from './serialization.js'

/**
 * Rows a statement. The first batch is small so that the first answers come back at once; each next
 * batch doubles, up to a size at which a round trip and a commit per batch cost little next to the rows,
 * while a batch (and its answer) still weighs a few hundred kilobytes and an interrupted load loses at
 * most one batch of work. On a server database 1,000 rows cost less than 500 (a statement's planning,
 * round trip and commit) and less than 2,000, whose rows, held while three batches are in flight, outlive
 * more of V8's young-generation collections and fill the old generation. The embedded database pays more
 * for each statement — each transaction opens its tables' files again, and its statements are planned
 * each time — so its batches grow larger (docs/performance.md, "Bulk load").
 */
export const FIRST_BATCH_ROWS = 250
export const SERVER_BATCH_ROWS = 1000
export const EMBEDDED_BATCH_ROWS = 2000
/** The largest batch, whichever the database. */
export const STREAM_BATCH_ROWS = Math.max(SERVER_BATCH_ROWS, EMBEDDED_BATCH_ROWS)

/**
 * A batch that is not full is written once its first row has waited this long, so that a client sending
 * slowly sees its answers come back as it goes rather than every STREAM_BATCH_ROWS rows.
 */
export const FLUSH_AFTER_MS = 200

/**
 * Batches being written at once, at most. More than one keeps the database busy while this process
 * turns one batch's rows into answers and reads the next; three rather than two also cover the wait of
 * each batch's commit for its WAL to reach the disk, which varies with what else the server writes (on
 * PostgreSQL, 100,000 rows: 2.5-3.1 s with three in six runs; 2.6-4.4 s with two). The server database
 * has a connection for each; the embedded one simply takes them in turn. Answers still go out in input
 * order.
 */
export const BATCHES_IN_FLIGHT = 3

/**
 * Characters a chunk of the response, about (75 created rows): each chunk is one write to the socket,
 * much of whose cost is per write (docs/performance.md, "Bulk load"), so chunks are as large as they can
 * be while still born in V8's young generation — a string over 128 KiB is not (see `answer` below), and a
 * chunk with a character past Latin-1 takes two bytes a character.
 */
export const ANSWER_PIECE_CHARS = 48 * 1024

export interface StreamLineSerializers {
  result(line: RowOutcome & { line: number }): string
  summary(line: { summary: BulkSummary }): string
}

export interface StreamOptions {
  flushAfterMs?: number
}

/** A line's item, or the error that makes it that line's failure (not the request's). */
function parseLine(line: NdjsonLine): unknown {
  if (line.tooLong) {
    return new AppError('payload_too_large', `Line ${line.lineNumber} is longer than ${MAX_LINE_BYTES} bytes`)
  }
  if (nestsDeeperThan(line.text)) return tooDeep(`Line ${line.lineNumber}`)
  try {
    return JSON.parse(line.text)
  } catch {
    return new AppError('invalid_json', `Line ${line.lineNumber} is not valid JSON`)
  }
}

/** The lines of one chunk read, parsed and checked (PendingRow), with their line numbers. */
async function prepareLines(
  loader: BulkUserLoader,
  firstIndex: number,
  lines: readonly NdjsonLine[],
): Promise<{ rows: PendingRow[]; numbers: number[] }> {
  const rows = new Array<PendingRow>(lines.length)
  const numbers = new Array<number>(lines.length)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const prepared = loader.prepare(firstIndex + i, parseLine(line))
    rows[i] = prepared instanceof Promise ? await prepared : prepared
    numbers[i] = line.lineNumber
  }
  return { rows, numbers }
}

interface InFlight {
  written: Promise<RowOutcome[]>
  lineNumbers: number[]
  done: boolean
}

const FLUSH_DUE = Symbol('flush due')
const WRITTEN = Symbol('written')

/**
 * The NDJSON form (docs/api.md#bulk-load-of-platform-users): reads the body, writes batches, and yields the answer a few chunks per
 * batch — a result line per input line, then the summary line. It is pulled by the response: while the
 * client is not reading answers, nothing more is read from the request and nothing more is written, so
 * memory stays at a few batches whatever the length of the stream. While BATCHES_IN_FLIGHT batches are being
 * written and the next one is full, the request is not read either.
 *
 * Waiting for input, it also wakes when a partial batch has waited FLUSH_AFTER_MS (the batch is written)
 * and when the oldest batch being written is done (its answer is sent): a slow sender sees its answers
 * as they are ready, not when enough later rows have arrived.
 */
export async function* streamBulkLoad(
  body: Readable,
  loader: BulkUserLoader,
  serialize: StreamLineSerializers,
  options: StreamOptions = {},
): AsyncGenerator<string> {
  const flushAfterMs = options.flushAfterMs ?? FLUSH_AFTER_MS
  const created = new CreatedRowLines()
  const chunks = ndjsonLineChunks(body)
  let pendingChunk: Promise<IteratorResult<NdjsonLine[]>> | undefined
  let batch: PendingRow[] = []
  let lineNumbers: number[] = []
  let batchStartedAt = 0
  const inFlight: InFlight[] = []
  let index = 0
  let batchRows = FIRST_BATCH_ROWS
  const maxBatchRows = loader.serverDatabase ? SERVER_BATCH_ROWS : EMBEDDED_BATCH_ROWS

  // A batch's answer as a few strings of about ANSWER_PIECE_CHARS, each joined at once (appending line by
  // line leaves a chain to flatten later), and each made only when the response asks for it. Not one
  // string a batch: a string of several hundred kilobytes is born in V8's large-object space, which only
  // a full collection frees. Not made ahead: text waiting for a slow client outlives minor collections
  // and is moved to the old generation, which then grows until the next full collection.
  function* answer(numbers: number[], outcomes: RowOutcome[]): Generator<string> {
    const lines: string[] = []
    let chars = 0
    for (let i = 0; i < outcomes.length; i++) {
      const outcome = outcomes[i]!
      const line = numbers[i]!
      const text =
        outcome.status === 201 && outcome.result
          ? created.line(outcome.index, line, outcome.result)
          : // The outcome is this answer's own object: giving it its line number costs no copy.
            serialize.result(Object.assign(outcome, { line }))
      lines.push(text)
      chars += text.length + 1
      if (chars >= ANSWER_PIECE_CHARS || i === outcomes.length - 1) {
        lines.push('')
        const piece = lines.join('\n')
        lines.length = 0
        chars = 0
        yield piece
      }
    }
  }
  const launch = () => {
    const entry: InFlight = { written: loader.write(batch), lineNumbers, done: false }
    // Awaited in turn below; until then a rejection must not count as unhandled.
    entry.written.then(
      () => {
        entry.done = true
      },
      () => {
        entry.done = true
      },
    )
    inFlight.push(entry)
    batch = []
    lineNumbers = []
  }
  /** The oldest batch's answer, once it is written. */
  const settleOldest = async () => {
    const oldest = inFlight.shift()!
    return answer(oldest.lineNumbers, await oldest.written)
  }

  try {
    for (;;) {
      pendingChunk ??= chunks.next()
      let next: ChunkEvent | undefined = await nextEvent(
        pendingChunk,
        batch.length > 0 ? batchStartedAt + flushAfterMs : 0,
        inFlight[0],
      )
      if (next === WRITTEN) {
        yield* await settleOldest()
        continue
      }
      if (next === FLUSH_DUE) {
        if (inFlight.length >= BATCHES_IN_FLIGHT) yield* await settleOldest()
        launch()
        continue
      }
      pendingChunk = undefined
      if (next.done) break
      // Every line of the chunk is parsed and checked before anything waits on the database: the text
      // read (one string, of which each line is a slice) is then free at once, rather than kept alive —
      // and so moved to the old generation by the next minor collection — while a batch is written.
      const { rows, numbers } = await prepareLines(loader, index, next.value)
      next = undefined
      index += rows.length
      for (let i = 0; i < rows.length; i++) {
        if (batch.length === 0) batchStartedAt = performance.now()
        batch.push(rows[i]!)
        lineNumbers.push(numbers[i]!)
        if (batch.length < batchRows) continue
        batchRows = Math.min(batchRows * 2, maxBatchRows)
        // The oldest batch is done: the next one takes its place before its answer is sent.
        const ready = inFlight.length >= BATCHES_IN_FLIGHT ? await settleOldest() : undefined
        launch()
        if (ready !== undefined) yield* ready
      }
    }
    if (batch.length > 0) launch()
    while (inFlight.length > 0) yield* await settleOldest()
    yield `${serialize.summary({ summary: loader.summary() })}\n`
  } finally {
    // Stopped early (the client went away, or an error): a read still pending must not reject unheard.
    pendingChunk?.catch(() => {})
  }
}

/**
 * Waits for the next chunk of lines, but no longer than until `flushAt` (a performance.now() time; 0 for
 * no limit) nor than until `oldest` has been written.
 */
type ChunkEvent = IteratorResult<NdjsonLine[]> | typeof FLUSH_DUE | typeof WRITTEN

function nextEvent(
  chunk: Promise<IteratorResult<NdjsonLine[]>>,
  flushAt: number,
  oldest: InFlight | undefined,
): Promise<ChunkEvent> {
  if (oldest?.done) return Promise.resolve(WRITTEN)
  if (flushAt === 0 && oldest === undefined) return chunk
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined
    if (flushAt !== 0) {
      timer = setTimeout(() => resolve(FLUSH_DUE), Math.max(0, flushAt - performance.now()))
    }
    const stop = () => clearTimeout(timer)
    chunk.then(
      (value) => {
        stop()
        resolve(value)
      },
      (error: unknown) => {
        stop()
        reject(error)
      },
    )
    oldest?.written.then(
      () => {
        stop()
        resolve(WRITTEN)
      },
      () => {
        stop()
        resolve(WRITTEN)
      },
    )
  })
}
