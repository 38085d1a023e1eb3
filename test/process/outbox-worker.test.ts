import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { start } from '../../src/server.js'
import { createTenantAsAdmin, insertUser } from '../helpers/fixtures.js'
import { runTenantry, type ServiceProcess } from '../helpers/process.js'
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js'
import { useTestApp } from '../helpers/test-app.js'
import { onServerDatabase } from '../helpers/test-database.js'
import { TEST_SECRET_KEY, TEST_TOKEN_SECRET } from '../helpers/test-env.js'

/**
 * `tenantry worker` as its own process (docs/api.md#the-invitation-e-mail): beside servers started with TENANTRY_WORKER=off, it
 * delivers what they queue, and stops cleanly on SIGTERM. It needs a PostgreSQL server database.
 */
// The test app starts no worker (only server.ts does): the process under test is the only one.
const t = useTestApp()
let smtp: TestSmtpServer
const processes: ServiceProcess[] = []
const folders: string[] = []

beforeAll(async () => {
  smtp = await startSmtpServer()
})
afterAll(async () => {
  for (const run of processes) if (run.child.exitCode === null) run.child.kill('SIGKILL')
  await smtp.close()
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})

describe('tenantry worker', () => {
  it('refuses the embedded database, which belongs to the server process', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-worker-'))
    folders.push(dataDir)
    const run = runTenantry(['worker'], { TENANTRY_DATA_DIR: dataDir, LOG_LEVEL: 'info' })
    processes.push(run)
    expect(await run.exited).toBe(78)
    expect(run.output()).toContain('tenantry worker needs a PostgreSQL server database')
  })

  it.skipIf(!onServerDatabase)(
    'delivers the invitations a server queues, and stops on SIGTERM',
    async () => {
      // The process runs on the wall clock: so does this app for this test.
      t.clock.set(new Date())
      const run = runTenantry(['worker'], {
        DATABASE_URL: t.database.url,
        TENANTRY_SECRET_KEY: TEST_SECRET_KEY.toString('base64'),
        TENANTRY_SMTP_URL: smtp.url,
        TENANTRY_PUBLIC_URL: 'https://tenantry.example.test',
        LOG_LEVEL: 'info',
      })
      processes.push(run)
      await run.waitFor(/outbox worker running: invitation e-mail goes out over SMTP/)

      const tenant = await createTenantAsAdmin(t)
      const user = await insertUser(t.database.handle.db)
      const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
        token: await t.adminToken(),
        body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
      })
      expect(invited.status).toBe(201)
      const [mail] = await smtp.waitForMailTo(user.email, 1)
      expect(mail!.text).toContain('https://tenantry.example.test/invitations/accept?token=')

      run.child.kill('SIGTERM')
      expect(await run.exited).toBe(0)
      expect(run.output()).toContain('outbox worker stopped')
      const record = await t.request('GET', `/v1/tenants/${tenant.id}/users/${user.id}`, {
        token: await t.adminToken(),
      })
      expect(record.body.result.invitationEmailStatus).toBe('sent')
    },
    60_000,
  )

  it.skipIf(!onServerDatabase)(
    "a server's own worker sends its mail over two connections of its own, beside the API's pool",
    async () => {
      t.clock.set(new Date())
      const config = loadConfig({
        DATABASE_URL: t.database.url,
        TENANTRY_SECRET_KEY: TEST_SECRET_KEY.toString('base64'),
        TENANTRY_TOKEN_SECRET: TEST_TOKEN_SECRET,
        TENANTRY_SMTP_URL: smtp.url,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
      })
      const server = await start(config, createLogger('silent'))
      try {
        const tenant = await createTenantAsAdmin(t)
        const user = await insertUser(t.database.handle.db)
        const invited = await fetch(`${server.url}/v1/tenants/${tenant.id}/users`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await t.adminToken()}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email: user.email, roleId: ROLE_IDS.agent, status: 'invited' }),
        })
        expect(invited.status).toBe(201)
        await smtp.waitForMailTo(user.email, 1)
        // The worker's statements ran on its own connections, not on the API's (which queue requests).
        const backends = await sql<{ application_name: string; query: string }>`
          select application_name, query from pg_stat_activity where datname = current_database()
            and application_name like 'tenantry%'`.execute(t.database.handle.db)
        const worker = backends.rows.filter((row) => row.application_name === 'tenantry outbox worker')
        expect(worker.length).toBeGreaterThanOrEqual(1)
        expect(worker.length).toBeLessThanOrEqual(2)
        expect(worker.some((row) => /outbox/.test(row.query))).toBe(true)
        expect(
          backends.rows
            .filter((row) => row.application_name === 'tenantry')
            .every((row) => !/outbox/.test(row.query) || /insert/i.test(row.query)),
        ).toBe(true)
      } finally {
        await server.close()
      }
    },
    60_000,
  )
})
