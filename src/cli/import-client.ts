import { Readable } from 'node:stream'
import { ndjsonLines } from '../modules/bulk/ndjson.js'

/** A failure that ends the command with exit code 2: usage, connection, credentials, protocol. */
export class ImportAbort extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ImportAbort'
  }
}

export interface Credentials {
  token?: string | undefined
  username?: string | undefined
  password?: string | undefined
}

async function call(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    throw new ImportAbort(
      `Cannot reach ${new URL(url).origin}: ${cause?.code ?? cause?.message ?? String(error)}`,
    )
  }
}

async function errorText(response: Response): Promise<string> {
  const text = await response.text().catch(() => '')
  try {
    const body = JSON.parse(text) as { error?: { reason?: string; message?: string } }
    if (body.error?.message) return `${response.status} ${body.error.reason}: ${body.error.message}`
  } catch {
    // not the error envelope: show the status alone
  }
  return `${response.status} ${response.statusText}`
}

/** The Authorization header: the token as given, or one obtained from POST /v1/tokens. */
export async function authorizationFor(baseUrl: string, credentials: Credentials): Promise<string> {
  if (credentials.token) return `Bearer ${credentials.token}`
  if (!credentials.username || !credentials.password) {
    throw new ImportAbort(
      'Credentials are needed: --token (or TENANTRY_TOKEN), or --username and --password ' +
        '(or TENANTRY_USERNAME and TENANTRY_PASSWORD)',
    )
  }
  const response = await call(`${baseUrl}/v1/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: credentials.username, password: credentials.password }),
  })
  if (response.status !== 200) throw new ImportAbort(`Login failed: ${await errorText(response)}`)
  const { token } = (await response.json()) as { token: string }
  return `Bearer ${token}`
}

/** What the server answers per line (docs/api.md#bulk-load-of-platform-users). */
export interface ResultLine {
  index: number
  line: number
  status: number
  result?: { id: string; email: string }
  error?: { code: number; reason: string; message: string; attribute?: Record<string, string> }
}
export interface Summary {
  total: number
  created: number
  failed: number
  dryRun?: boolean
}
export type AnswerLine = ResultLine | { summary: Summary } | { error: { message: string; reason: string } }

/**
 * POSTs the NDJSON body as a stream and yields the answer lines as they arrive: the request body and the
 * response flow at the same time (the server answers each batch while the next is being sent).
 */
export async function* postNdjson(
  baseUrl: string,
  authorization: string,
  body: AsyncIterable<string>,
  options: { dryRun: boolean },
): AsyncGenerator<AnswerLine> {
  const url = `${baseUrl}/v1/users${options.dryRun ? '?dryRun=true' : ''}`
  const response = await call(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', authorization },
    body: Readable.toWeb(Readable.from(body)) as ReadableStream,
    duplex: 'half',
  } as RequestInit)
  if (response.status !== 200 || !response.body) {
    throw new ImportAbort(`The server refused the import: ${await errorText(response)}`)
  }
  try {
    for await (const line of ndjsonLines(
      response.body as unknown as AsyncIterable<Buffer>,
      Number.POSITIVE_INFINITY,
    )) {
      if (line.tooLong) continue
      yield JSON.parse(line.text) as AnswerLine
    }
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new ImportAbort(`The server sent something that is not NDJSON: ${error.message}`)
    throw new ImportAbort(`The connection broke during the import: ${(error as Error).message}`)
  }
}
