import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { REGION_ID } from '../helpers/fixtures.js'
import { runTenantry, type ServiceProcess, seedDataFolder } from '../helpers/process.js'
import { TEST_ADMIN, TEST_SECRET_KEY } from '../helpers/test-env.js'

/**
 * docs/operations.md across real processes: the data folder's lock, the start-up errors, tracing. Each test picks
 * its own database (a data folder, a bad URL, memory://), so the file tells all in one CI leg
 * (vitest.config.ts, ONE_LEG_TESTS); the counters shared on one PostgreSQL are in shared-counters.test.ts.
 */
const folders: string[] = []
const processes: ServiceProcess[] = []
afterAll(async () => {
  for (const run of processes) if (run.child.exitCode === null) run.child.kill('SIGKILL')
  await Promise.all(processes.map((run) => run.exited))
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})

function start(args: string[], env: Record<string, string>): ServiceProcess {
  const run = runTenantry(args, env)
  processes.push(run)
  return run
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, init)
  return { status: response.status, body: await response.json() }
}

async function login(url: string, username: string, password: string) {
  return json(`${url}/v1/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })
}

describe('the embedded data folder', () => {
  it('is locked: a second process refuses to start, the first keeps serving and loses nothing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-lock-'))
    folders.push(dataDir)
    const env = { TENANTRY_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' }
    await seedDataFolder(dataDir)
    const first = start(['serve'], env)
    const [, url] = await first.waitFor(/Tenantry listening on (http:\/\/[^"\s]+)/, 150_000)
    const { email, password } = TEST_ADMIN

    const second = start(['serve'], env)
    expect(await second.exited).not.toBe(0)
    expect(second.output()).toMatch(/data folder .* is in use by another Tenantry process \(pid \d+/)
    // Nor can a migration run beside it.
    const migrate = start(['migrate'], env)
    expect(await migrate.exited).not.toBe(0)
    expect(migrate.output()).toContain('is in use by another Tenantry process')

    const token = (await login(url!, email, password)).body.token
    const created = await json(`${url}/v1/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Written while locked', regionId: REGION_ID }),
    })
    expect(created.status).toBe(201)
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)

    // Released on a clean stop; taken over at once from a process that was killed.
    const third = start(['serve'], env)
    const [, url3] = await third.waitFor(/Tenantry listening on (http:\/\/[^"\s]+)/, 150_000)
    const token3 = (await login(url3!, email, password)).body.token
    const read = await json(`${url3}/v1/tenants/${created.body.result.id}`, {
      headers: { authorization: `Bearer ${token3}` },
    })
    expect(read.body.result.name).toBe('Written while locked')
    third.child.kill('SIGKILL')
    await third.exited
    const fourth = start(['serve'], env)
    await fourth.waitFor(/Tenantry listening on/, 150_000)
    fourth.child.kill('SIGTERM')
    expect(await fourth.exited).toBe(0)
  }, 600_000)
})

describe('a database that cannot be reached at start', () => {
  it('stops the start with the URL (password hidden) and what failed, not a failed migration', async () => {
    const run = start(['serve'], {
      DATABASE_URL: 'postgres://tenantry:s3cret-pw@127.0.0.1:1/tenantry',
      TENANTRY_SECRET_KEY: TEST_SECRET_KEY.toString('base64'),
      PORT: '0',
      HOST: '127.0.0.1',
    })
    expect(await run.exited).not.toBe(0)
    const output = run.output()
    expect(output).toContain('cannot reach the database at postgres://tenantry:***@127.0.0.1:1/tenantry')
    expect(output).toContain('ECONNREFUSED')
    expect(output).not.toContain('s3cret-pw')
    expect(output).not.toMatch(/migration/i)
  }, 60_000)
})

describe('tracing', () => {
  it('exports spans over OTLP to a loopback receiver, under the caller traceparent, with the trace id in the log', async () => {
    const received: string[] = []
    const receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString()
      })
      req.on('end', () => {
        if (req.url === '/v1/traces') received.push(body)
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = receiver.address() as AddressInfo
      const run = start(['serve'], {
        DATABASE_URL: 'memory://',
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_FORMAT: 'json',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      })
      const [, url] = await run.waitFor(/Tenantry listening on (http:\/\/[^"\s]+)/, 150_000)
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
      const response = await fetch(`${url}/v1/regions`, {
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      })
      expect(response.status).toBe(401)
      await run.waitFor(new RegExp(`"traceId":"${traceId}"`), 30_000)
      const deadline = Date.now() + 30_000
      while (!received.some((body) => body.includes(traceId)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(received.some((body) => body.includes(traceId))).toBe(true)
      run.child.kill('SIGTERM')
      expect(await run.exited).toBe(0)
    } finally {
      receiver.close()
    }
  }, 240_000)
})
