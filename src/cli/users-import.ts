import { once } from 'node:events'
import { createWriteStream, existsSync, statSync, type WriteStream } from 'node:fs'
import { parseArgs } from 'node:util'
import { STREAM_BATCH_ROWS } from '../modules/bulk/bulk-stream.js'
import { type AnswerLine, authorizationFor, ImportAbort, postNdjson, type Summary } from './import-client.js'
import { estimateRows, formatOf, readSource, type SourceRow } from './import-source.js'
import { createProgress } from './progress.js'

export const USERS_USAGE = `Usage: tenantry users import FILE [options]

Imports platform users from a CSV file (a header row naming the fields: email, roleId, firstName,
lastName, externalId, status, personalTelephone, additionalRoleIds, tenantId, tenantRoleId, tenantStatus)
or an NDJSON file (one JSON user per line) into a running Tenantry server. Every failed row is written,
with its line number, input and error, to the report file.

Options:
  --url URL            the server (env TENANTRY_URL; default http://localhost:8080)
  --token TOKEN        an access token (env TENANTRY_TOKEN), or:
  --username EMAIL     log in with these (env TENANTRY_USERNAME, TENANTRY_PASSWORD)
  --password PASSWORD
  --format csv|ndjson  the file's format (default: from its extension, .csv or .ndjson/.jsonl)
  --role-id UUID       the platform role of rows that name none
  --report PATH        where failed rows go (default: FILE.errors.ndjson)
  --dry-run            check every row, create nothing
  -h, --help           this text

Exit status: 0 every row succeeded, 1 some rows failed (see the report), 2 the import could not run.
`

export interface CliIo {
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
  env: Record<string, string | undefined>
}

const defaultIo: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env }

/**
 * Rows sent but not answered yet, at most. The server answers a batch once the next one has arrived, so
 * this must hold more than two of its largest batches; it bounds the memory of the rows kept for the report.
 */
const WINDOW_ROWS = 10 * STREAM_BATCH_ROWS

/** `tenantry users …`: exit status 0, 1 (rows failed) or 2 (could not run). */
export async function runUsersCommand(argv: string[], io: CliIo = defaultIo): Promise<number> {
  try {
    return await importUsers(argv, io)
  } catch (error) {
    if (error instanceof ImportAbort) {
      io.stderr.write(`tenantry users import: ${error.message}\n`)
      return 2
    }
    throw error
  }
}

async function importUsers(argv: string[], io: CliIo): Promise<number> {
  const [subcommand, ...rest] = argv
  if (subcommand === undefined || subcommand === '--help' || subcommand === '-h' || subcommand === 'help') {
    io.stdout.write(USERS_USAGE)
    return subcommand === undefined ? 2 : 0
  }
  if (subcommand !== 'import') throw new ImportAbort(`unknown subcommand "${subcommand}"\n\n${USERS_USAGE}`)

  let parsed: ReturnType<typeof parseOptions>
  try {
    parsed = parseOptions(rest)
  } catch (error) {
    throw new ImportAbort(`${(error as Error).message}\n\n${USERS_USAGE}`)
  }
  const { values, positionals } = parsed
  if (values.help) {
    io.stdout.write(USERS_USAGE)
    return 0
  }
  const file = positionals[0]
  if (!file || positionals.length > 1) throw new ImportAbort(`name one file to import\n\n${USERS_USAGE}`)
  if (!existsSync(file) || !statSync(file).isFile()) throw new ImportAbort(`no such file: ${file}`)
  const format = formatOf(file, values.format)
  if (!format) throw new ImportAbort('say --format csv or --format ndjson (the extension does not tell)')
  const baseUrl = (values.url ?? io.env.TENANTRY_URL ?? 'http://localhost:8080').replace(/\/+$/, '')
  if (!/^https?:\/\/[^/]+/.test(baseUrl))
    throw new ImportAbort(`--url must be an http(s) URL (got "${baseUrl}")`)
  const reportPath = values.report ?? `${file}.errors.ndjson`
  const dryRun = values['dry-run'] ?? false

  const authorization = await authorizationFor(baseUrl, {
    token: values.token ?? io.env.TENANTRY_TOKEN,
    username: values.username ?? io.env.TENANTRY_USERNAME,
    password: values.password ?? io.env.TENANTRY_PASSWORD,
  })

  const startedAt = Date.now()
  const progress = createProgress({ stream: io.stderr, total: await estimateRows(file, format) })
  const report = new FailureReport(reportPath)
  const pending = new Map<number, Pick<SourceRow, 'line' | 'input'>>()
  const window = new Window()
  let done = 0
  let failed = 0
  let summary: Summary | undefined

  async function* body(): AsyncGenerator<string> {
    let index = 0
    let chunk = ''
    const rows = readSource(file!, {
      format: format!,
      roleId: values['role-id'],
      onUnknownColumns: (headers) =>
        progress.note(`ignoring columns that name no user field: ${headers.join(', ')}`),
    })
    // A file that cannot be read to its end (a CSV quote never closed, say) ends the body where it
    // broke: the rows before are answered as usual, then the command stops with the reason.
    const read = async function* () {
      try {
        yield* rows
      } catch (error) {
        unreadable = error instanceof Error ? error.message : String(error)
      }
    }
    for await (const row of read()) {
      if (window.closed) return
      if (row.localError !== undefined) {
        await report.add({
          line: row.line,
          input: row.input,
          status: 400,
          error: { message: row.localError },
        })
        done += 1
        failed += 1
        continue
      }
      pending.set(index, { line: row.line, input: row.input })
      index += 1
      chunk += `${row.text}\n`
      if (chunk.length >= 64 * 1024) {
        yield chunk
        chunk = ''
      }
      if (pending.size >= WINDOW_ROWS) {
        if (chunk) yield chunk
        chunk = ''
        await window.wait(() => pending.size < WINDOW_ROWS / 2)
      }
    }
    if (chunk) yield chunk
  }

  let stopped: string | undefined
  let unreadable: string | undefined
  try {
    for await (const answer of postNdjson(baseUrl, authorization, body(), { dryRun })) {
      if ('summary' in answer) {
        summary = answer.summary
        continue
      }
      if (!('index' in answer)) {
        stopped = answer.error.message
        break
      }
      const source = pending.get(answer.index)
      pending.delete(answer.index)
      done += 1
      if (answer.status >= 400) {
        failed += 1
        await report.add({
          line: source?.line ?? answer.line,
          input: source?.input,
          status: answer.status,
          error: answer.error,
        })
      }
      progress.update(done, failed)
      window.check()
    }
  } finally {
    window.close()
    progress.update(done, failed)
    progress.stop()
    await report.close()
  }

  const seconds = (Date.now() - startedAt) / 1000
  const rate = seconds > 0 ? Math.round(done / seconds) : done
  if (unreadable !== undefined) {
    io.stderr.write(
      `tenantry users import: ${file} could not be read to its end (${unreadable}); the ${done} rows before were processed\n` +
        (report.count > 0 ? `Failed rows: ${reportPath}\n` : ''),
    )
    return 2
  }
  if (stopped !== undefined || !summary) {
    io.stderr.write(
      `tenantry users import: the server stopped after ${done} rows: ${stopped ?? 'the answer ended early'}\n` +
        (report.count > 0 ? `Failed rows so far: ${reportPath}\n` : ''),
    )
    return 2
  }
  const ok = done - failed
  const n = (value: number) => value.toLocaleString('en-US')
  io.stdout.write(
    dryRun
      ? `Dry run of ${file}: ${n(ok)} valid, ${n(failed)} would fail, ${n(done)} rows in ${seconds.toFixed(1)} s (${n(rate)} rows/s); nothing was written\n`
      : `Imported ${file}: ${n(summary.created)} created, ${n(failed)} failed, ${n(done)} rows in ${seconds.toFixed(1)} s (${n(rate)} rows/s)\n`,
  )
  if (failed > 0) io.stdout.write(`Failed rows, with their line numbers and errors: ${reportPath}\n`)
  return failed > 0 ? 1 : 0
}

function parseOptions(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      format: { type: 'string' },
      'role-id': { type: 'string' },
      report: { type: 'string' },
      'dry-run': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

/** The failed rows, one JSON object a line; the file is created at the first failure. */
class FailureReport {
  #stream: WriteStream | undefined
  count = 0
  constructor(readonly path: string) {}

  async add(failure: { line: number; input: unknown; status: number; error: unknown }): Promise<void> {
    this.#stream ??= createWriteStream(this.path, { flags: 'w' })
    this.count += 1
    if (!this.#stream.write(`${JSON.stringify(failure)}\n`)) await once(this.#stream, 'drain')
  }

  async close(): Promise<void> {
    const stream = this.#stream
    if (!stream) return
    await new Promise<void>((resolve, reject) =>
      stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
    )
  }
}

/** Holds the sender while too many rows are unanswered; released as answers arrive or when it ends. */
class Window {
  #waiting: { ready: () => boolean; resolve: () => void } | undefined
  closed = false

  wait(ready: () => boolean): Promise<void> {
    if (this.closed || ready()) return Promise.resolve()
    return new Promise((resolve) => {
      this.#waiting = { ready, resolve }
    })
  }

  check(): void {
    if (this.#waiting?.ready()) this.#release()
  }

  close(): void {
    this.closed = true
    this.#release()
  }

  #release(): void {
    const waiting = this.#waiting
    this.#waiting = undefined
    waiting?.resolve()
  }
}

export type { AnswerLine }
