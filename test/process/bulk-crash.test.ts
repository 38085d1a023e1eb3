import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { openDatabase } from '../../src/db/database.js'
import { adminUrl, databaseUrl } from '../helpers/pg-urls.js'
import { TEST_ADMIN, TEST_SECRET_KEY } from '../helpers/test-env.js'

/**
 * The real server, killed with SIGKILL in the middle of a 50,000-row NDJSON import, then restarted on the
 * same data: what was committed is intact, the re-run reports it as existing, and no user exists twice.
 * Runs on the embedded database (a data folder) or, with TEST_DATABASE_URL, a throw-away database.
 */
const ROWS = 50_000
const serverUrl = process.env.TEST_DATABASE_URL
let dataDir: string
let pgDatabase: string | undefined
let server: { child: ChildProcess; url: string } | undefined

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tenantry-crash-'))
  if (serverUrl) {
    pgDatabase = `tenantry_crash_${randomBytes(5).toString('hex')}`
    await adminQuery(`create database ${pgDatabase}`)
  }
})
afterAll(async () => {
  server?.child.kill('SIGKILL')
  if (pgDatabase) await adminQuery(`drop database if exists ${pgDatabase} with (force)`)
  rmSync(dataDir, { recursive: true, force: true })
})

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl(serverUrl!) })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** `tenantry serve` as a child process on a port of its own choosing; resolves once it listens. */
async function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    PORT: '0',
    HOST: '127.0.0.1',
    TENANTRY_DATA_DIR: dataDir,
    TENANTRY_ADMIN_EMAIL: TEST_ADMIN.email,
    TENANTRY_ADMIN_PASSWORD: TEST_ADMIN.password,
    TENANTRY_WORKER: 'off',
    LOG_LEVEL: 'info',
  }
  if (pgDatabase) {
    env.DATABASE_URL = databaseUrl(serverUrl!, pgDatabase)
    env.TENANTRY_SECRET_KEY = TEST_SECRET_KEY.toString('base64')
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { env, stdio: 'pipe' })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk
      const match = /Tenantry listening on (http:\/\/[^"\s]+)/.exec(output)
      if (match) resolve(match[1]!)
    })
    child.stderr!.on('data', (chunk) => {
      output += chunk
    })
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening:\n${output}`)))
  })
  child.stdout!.resume()
  return { child, url }
}

async function tokenFor(url: string): Promise<string> {
  const response = await fetch(`${url}/v1/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
  })
  return ((await response.json()) as { token: string }).token
}

const emailOf = (i: number) => `crash-${i}@example.test`
const lineOf = (i: number) =>
  `${JSON.stringify({ email: emailOf(i), roleId: ROLE_IDS.platformUser, firstName: `Row ${i}` })}\n`

interface ImportRun {
  results: Map<number, { status: number; id?: string; reason?: string }>
  summary?: { total: number; created: number; failed: number }
  broken: boolean
}

/**
 * Streams every row to the NDJSON endpoint over a raw HTTP connection, reading answers while it sends.
 * `onResult` may end the server; the run then reports what it had received.
 */
function importRows(url: string, token: string, onResult?: (run: ImportRun) => void): Promise<ImportRun> {
  const run: ImportRun = { results: new Map(), broken: false }
  return new Promise((resolve) => {
    let settled = false
    const finish = (broken: boolean) => {
      if (settled) return
      settled = true
      run.broken = broken
      resolve(run)
    }
    const req = request(`${url}/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    })
    req.on('error', () => finish(true))
    req.on('response', (res) => {
      let carry = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        const lines = (carry + chunk).split('\n')
        carry = lines.pop()!
        for (const line of lines) {
          const answer = JSON.parse(line)
          if (answer.summary) run.summary = answer.summary
          else
            run.results.set(answer.index, {
              status: answer.status,
              id: answer.result?.id,
              reason: answer.error?.reason,
            })
        }
        onResult?.(run)
      })
      res.on('end', () => finish(run.summary === undefined))
      res.on('error', () => finish(true))
      res.on('aborted', () => finish(true))
    })
    void (async () => {
      for (let i = 0; i < ROWS && !settled; i += 500) {
        let chunk = ''
        for (let j = i; j < Math.min(i + 500, ROWS); j++) chunk += lineOf(j)
        if (!req.write(chunk)) await Promise.race([once(req, 'drain'), once(req, 'close')])
      }
      if (!settled) req.end()
    })().catch(() => finish(true))
  })
}

async function storedUsers(): Promise<{ email: string; id: string }[]> {
  const handle = await openDatabase({
    url: pgDatabase ? databaseUrl(serverUrl!, pgDatabase) : undefined,
    dataDir,
  })
  try {
    return await handle.db
      .selectFrom('users')
      .select(['email', 'id'])
      .where('email', 'like', 'crash-%')
      .execute()
  } finally {
    await handle.close()
  }
}

describe('a bulk import interrupted by the server dying', () => {
  it('keeps the committed rows, reports them as existing on the re-run, and never creates a user twice', async () => {
    server = await startServer()
    let token = await tokenFor(server.url)
    const victim = server.child
    const first = await importRows(server.url, token, (run) => {
      // Well into the stream, with batches committed and more on the way: pull the plug.
      if (run.results.size >= 8_000 && victim.exitCode === null && !victim.killed) victim.kill('SIGKILL')
    })
    await once(victim, 'exit').catch(() => {})
    expect(first.broken).toBe(true)
    expect(first.summary).toBeUndefined()
    const createdBefore = [...first.results].filter(([, r]) => r.status === 201)
    expect(createdBefore.length).toBeGreaterThanOrEqual(8_000)
    expect(createdBefore.length).toBeLessThan(ROWS)

    server = await startServer()
    token = await tokenFor(server.url)
    const second = await importRows(server.url, token)
    expect(second.broken).toBe(false)
    expect(second.results.size).toBe(ROWS)
    // Every row answered before the crash is now reported as already existing …
    for (const [index] of createdBefore) expect(second.results.get(index)?.reason).toBe('email_taken')
    // … every row is either created now or existed already, and the two runs together made each once.
    const statuses = [...second.results.values()].map((r) => r.status)
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
    const createdNow = statuses.filter((s) => s === 201).length
    expect(second.summary).toEqual({ total: ROWS, created: createdNow, failed: ROWS - createdNow })
    expect(ROWS - createdNow).toBeGreaterThanOrEqual(createdBefore.length)

    server.child.kill('SIGTERM')
    await once(server.child, 'exit')
    server = undefined
    const stored = await storedUsers()
    expect(stored).toHaveLength(ROWS)
    expect(new Set(stored.map((u) => u.email)).size).toBe(ROWS)
    // The rows committed before the crash are the same rows, untouched by the re-run.
    const idByEmail = new Map(stored.map((u) => [u.email, u.id]))
    for (const [index, result] of createdBefore) expect(idByEmail.get(emailOf(index))).toBe(result.id)
  }, 240_000)
})
