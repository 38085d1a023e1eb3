import { afterAll, describe, expect, it } from 'vitest'
import { runTenantry, type ServiceProcess } from '../helpers/process.js'
import { createTestDatabase, onServerDatabase, type TestDatabase } from '../helpers/test-database.js'
import { TEST_ADMIN, TEST_SECRET_KEY } from '../helpers/test-env.js'

/** docs/operations.md#rate-limit-counters-across-processes: two API processes on one PostgreSQL share their rate-limit counters. */
const processes: ServiceProcess[] = []
const databases: TestDatabase[] = []
afterAll(async () => {
  for (const run of processes) if (run.child.exitCode === null) run.child.kill('SIGKILL')
  await Promise.all(processes.map((run) => run.exited))
  for (const database of databases) await database.drop()
})

function start(args: string[], env: Record<string, string>): ServiceProcess {
  const run = runTenantry(args, env)
  processes.push(run)
  return run
}

async function login(url: string, username: string, password: string) {
  const response = await fetch(`${url}/v1/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })
  return { status: response.status, body: (await response.json()) as any }
}

describe.runIf(onServerDatabase)('rate-limit counters on one PostgreSQL', () => {
  it('are shared by two processes: the failed-login budget is not multiplied', async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const env = {
      DATABASE_URL: database.url,
      TENANTRY_SECRET_KEY: TEST_SECRET_KEY.toString('base64'),
      PORT: '0',
      HOST: '127.0.0.1',
      TENANTRY_WORKER: 'off',
    }
    const [a, b] = [start(['serve'], env), start(['serve'], env)]
    const [, urlA] = await a.waitFor(/Tenantry listening on (http:\/\/[^"\s]+)/, 150_000)
    const [, urlB] = await b.waitFor(/Tenantry listening on (http:\/\/[^"\s]+)/, 150_000)
    // Ten wrong passwords, five through each process: the username's budget (10 a minute) is spent.
    for (let i = 0; i < 10; i++) {
      const wrong = await login(i % 2 === 0 ? urlA! : urlB!, TEST_ADMIN.email, `wrong-${i}`)
      expect(wrong.status).toBe(401)
    }
    for (const url of [urlA!, urlB!]) {
      const refused = await login(url, TEST_ADMIN.email, TEST_ADMIN.password)
      expect(refused.status).toBe(429)
      expect(refused.body.error.reason).toBe('rate_limited')
    }
    a.child.kill('SIGTERM')
    b.child.kill('SIGTERM')
    await Promise.all([a.exited, b.exited])
  }, 300_000)
})
