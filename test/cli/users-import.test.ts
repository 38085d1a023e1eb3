import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { runUsersCommand } from '../../src/cli/users-import.js'
import { closeAfterBulk } from '../helpers/bulk.js'
import { insertUser, uniqueEmail } from '../helpers/fixtures.js'
import { useTestApp } from '../helpers/test-app.js'
import { TEST_ADMIN } from '../helpers/test-env.js'

/** `tenantry users import` against a real listening server, run as the command a person runs. */

const t = useTestApp()
let url: string
let dir: string

beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = mkdtempSync(join(tmpdir(), 'tenantry-import-'))
})
afterAll(async () => {
  await closeAfterBulk(t)
  rmSync(dir, { recursive: true, force: true })
})

interface Run {
  code: number
  stdout: string
  stderr: string
}

function tenantry(args: string[], env: Record<string, string> = {}): Promise<Run> {
  // Only what the command needs: no TENANTRY_* from the surrounding shell.
  const baseEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', ...args],
      { env: { ...baseEnv, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

async function findByEmail(email: string) {
  return t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, { token: await t.adminToken() })
}

/** The same command in this process (no start-up cost), for the cases that end before any import. */
/** `tenantry users import FILE` against the test server, with more flags. */
function importArgs(file: string, ...flags: string[]): string[] {
  return ['users', 'import', file, '--url', url, ...flags]
}

async function tenantryHere(args: string[]): Promise<Run> {
  const capture = () => {
    const stream = new PassThrough()
    let text = ''
    stream.on('data', (chunk) => {
      text += chunk
    })
    return { stream: stream as unknown as NodeJS.WriteStream, text: () => text }
  }
  const [stdout, stderr] = [capture(), capture()]
  const code = await runUsersCommand(args.slice(1), { stdout: stdout.stream, stderr: stderr.stream, env: {} })
  return { code, stdout: stdout.text(), stderr: stderr.text() }
}

const login = () => ['--username', TEST_ADMIN.email, '--password', TEST_ADMIN.password]

describe('tenantry users import', () => {
  it('imports a CSV, reports every failed row with its line, input and error, and exits 1', async () => {
    const existing = await insertUser(t.database.handle.db)
    const good = [uniqueEmail('csv'), uniqueEmail('csv'), uniqueEmail('csv')]
    const file = join(dir, 'people.csv')
    writeFileSync(
      file,
      [
        'Email,First Name,last_name,Personal Telephone,roleId,favourite colour',
        `${good[0]},Ada,Lovelace,+441234567890,${ROLE_IDS.platformUser},green`,
        `not-an-email,Bad,Mail,,${ROLE_IDS.platformUser},red`,
        `${good[1]},"Hopper, Grace",,,${ROLE_IDS.platformUser},`,
        `${uniqueEmail('phone')},Bad,Phone,0800 123,${ROLE_IDS.platformUser},`,
        `${existing.email},Already,Here,,${ROLE_IDS.platformUser},`,
        `${good[0]!.toUpperCase()},Twice,In File,,${ROLE_IDS.platformUser},`,
        `${good[2]},Last,Row,,${ROLE_IDS.platformUser},blue`,
      ].join('\n'),
    )

    const run = await tenantry(importArgs(file, ...login()))

    expect(run.code).toBe(1)
    expect(run.stdout).toContain('3 created, 4 failed, 7 rows')
    expect(run.stdout).toContain(`${file}.errors.ndjson`)
    expect(run.stderr).toContain('favourite colour')
    const report = readFileSync(`${file}.errors.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(report.map((r) => [r.line, r.status, r.error.reason])).toEqual([
      [3, 400, 'validation_failed'],
      [5, 400, 'validation_failed'],
      [6, 409, 'email_taken'],
      [7, 409, 'email_taken'],
    ])
    expect(report[0].input).toMatchObject({ Email: 'not-an-email', 'First Name': 'Bad' })
    expect(report[0].error.attribute).toHaveProperty('email')
    expect(report[1].error.attribute).toHaveProperty('personalTelephone')
    expect(report[2].error.message).toContain('already exists')

    const ada = await findByEmail(good[0]!)
    expect(ada.body.result[0]).toMatchObject({
      firstName: 'Ada',
      lastName: 'Lovelace',
      personalTelephone: '+441234567890',
    })
    expect((await findByEmail(good[1]!)).body.result[0].firstName).toBe('Hopper, Grace')
    expect((await findByEmail(good[2]!)).status).toBe(200)
  })

  it('--dry-run reports what would fail and creates nothing', async () => {
    const emails = [uniqueEmail('dry'), uniqueEmail('dry')]
    const file = join(dir, 'dry.csv')
    writeFileSync(file, `email\n${emails[0]}\nbroken\n${emails[1]}\n`)
    const report = join(dir, 'dry-report.ndjson')

    const run = await tenantry(
      importArgs(file, '--role-id', ROLE_IDS.platformUser, '--dry-run', '--report', report),
      { TENANTRY_USERNAME: TEST_ADMIN.email, TENANTRY_PASSWORD: TEST_ADMIN.password },
    )

    expect(run.code).toBe(1)
    expect(run.stdout).toContain('Dry run')
    expect(run.stdout).toContain('2 valid, 1 would fail')
    expect(readFileSync(report, 'utf8')).toContain('"line":3')
    for (const email of emails) expect((await findByEmail(email)).status).toBe(404)
  })

  it('imports an NDJSON file with a token from the environment and exits 0 when every row is created', async () => {
    const emails = Array.from({ length: 25 }, () => uniqueEmail('nd'))
    const file = join(dir, 'people.ndjson')
    writeFileSync(
      file,
      `${emails.map((email) => JSON.stringify({ email, roleId: ROLE_IDS.platformUser })).join('\n')}\n`,
    )

    const run = await tenantry(['users', 'import', file], {
      TENANTRY_URL: url,
      TENANTRY_TOKEN: await t.adminToken(),
    })

    expect(run.code).toBe(0)
    expect(run.stdout).toContain('25 created, 0 failed, 25 rows')
    expect(existsSync(`${file}.errors.ndjson`)).toBe(false)
    for (const email of [emails[0]!, emails[24]!]) expect((await findByEmail(email)).status).toBe(200)
  })

  it('stops with exit 2 at a CSV it cannot read on, after the rows before it', async () => {
    const before = uniqueEmail('before-break')
    const file = join(dir, 'broken.csv')
    writeFileSync(
      file,
      `email,firstName\n${before},Ok\n${uniqueEmail('x')},"never closed\n${uniqueEmail('y')},z\n`,
    )

    const run = await tenantryHere(importArgs(file, '--role-id', ROLE_IDS.platformUser, ...login()))

    expect(run.code).toBe(2)
    expect(run.stderr).toContain('could not be read to its end')
    expect((await findByEmail(before)).status).toBe(200)
  })

  it('exits 2 when it cannot run: no file, bad credentials, no server', async () => {
    const file = join(dir, 'one.csv')
    writeFileSync(file, `email,roleId\n${uniqueEmail('x')},${ROLE_IDS.platformUser}\n`)

    const missing = await tenantryHere(importArgs(join(dir, 'nope.csv'), ...login()))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('no such file')

    const wrong = await tenantryHere(
      importArgs(file, '--username', TEST_ADMIN.email, '--password', 'wrong-password'),
    )
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('Login failed: 401')

    const noCredentials = await tenantryHere(importArgs(file))
    expect(noCredentials.code).toBe(2)
    expect(noCredentials.stderr).toContain('Credentials are needed')

    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const down = await tenantryHere([
      'users',
      'import',
      file,
      '--url',
      `http://127.0.0.1:${port}`,
      '--token',
      'x',
    ])
    expect(down.code).toBe(2)
    expect(down.stderr).toContain('Cannot reach')
  })
})
