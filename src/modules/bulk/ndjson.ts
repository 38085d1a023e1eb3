import { StringDecoder } from 'node:string_decoder'

/** One line of an NDJSON stream: its 1-based number and its text, or why it could not be read. */
export type NdjsonLine =
  | { lineNumber: number; text: string; tooLong?: false }
  | { lineNumber: number; text?: undefined; tooLong: true }

/** A line longer than this is that line's error, not a reason to buffer without bound. */
export const MAX_LINE_BYTES = 64 * 1024

/**
 * Splits a byte stream into lines in constant memory, handing them out a chunk at a time: the lines
 * completed by each piece of input read (none, when a piece ends inside a line). It pulls one chunk at a
 * time (the async iterator of a Readable), so a consumer that stops asking stops the reading: TCP
 * backpressure reaches the sender. A line over `maxLineBytes` is reported as too long and skipped up to
 * its newline. Blank lines are skipped, as NDJSON readers do; a trailing line without a newline counts.
 * CRLF is accepted.
 */
export async function* ndjsonLineChunks(
  source: AsyncIterable<Buffer | string>,
  maxLineBytes = MAX_LINE_BYTES,
): AsyncGenerator<NdjsonLine[]> {
  const decoder = new StringDecoder('utf8')
  let carry = ''
  let skipping = false
  let lineNumber = 0

  const finish = (text: string): NdjsonLine | undefined => {
    lineNumber += 1
    if (skipping || text.length > maxLineBytes) {
      skipping = false
      return { lineNumber, tooLong: true }
    }
    const line = text.endsWith('\r') ? text.slice(0, -1) : text
    if (line.trim() === '') return undefined
    return { lineNumber, text: line }
  }

  for await (const chunk of source) {
    const piece = typeof chunk === 'string' ? chunk : decoder.write(chunk)
    const lines: NdjsonLine[] = []
    let start = 0
    for (;;) {
      const newline = piece.indexOf('\n', start)
      if (newline === -1) break
      const text = carry === '' ? piece.slice(start, newline) : carry + piece.slice(start, newline)
      carry = ''
      start = newline + 1
      const line = finish(text)
      if (line) lines.push(line)
    }
    if (!skipping) {
      carry += piece.slice(start)
      // Characters, not bytes, but a UTF-8 line has at least as many bytes as characters.
      if (carry.length > maxLineBytes) {
        carry = ''
        skipping = true
      }
    }
    if (lines.length > 0) yield lines
  }
  const rest = carry + decoder.end()
  if (skipping || rest !== '') {
    const line = finish(rest)
    if (line) yield [line]
  }
}

/** The same lines one at a time. */
export async function* ndjsonLines(
  source: AsyncIterable<Buffer | string>,
  maxLineBytes = MAX_LINE_BYTES,
): AsyncGenerator<NdjsonLine> {
  for await (const lines of ndjsonLineChunks(source, maxLineBytes)) yield* lines
}
