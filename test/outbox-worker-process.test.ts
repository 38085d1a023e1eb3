import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../src/access/permissions.js'
import { createTenantAsAdmin, insertUser } from './helpers/fixtures.js'
import { runTenantry, type ServiceProcess } from './helpers/process.js'
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp.js'
import { createTestApp, type TestApp } from './helpers/test-app.js'
import { onServerDatabase } from './helpers/test-database.js'
import { TEST_SECRET_KEY } from './helpers/test-env.js'

/**
 * `tenantry worker` as its own process (API.md §6): beside servers started with TENANTRY_WORKER=off, it
 * delivers what they queue, and stops cleanly on SIGTERM. It needs a PostgreSQL server database.
 */
let t: TestApp
let smtp: TestSmtpServer
const processes: ServiceProcess[] = []
const folders: string[] = []

beforeAll(async () => {
  smtp = await startSmtpServer()
  // The test app starts no worker (only server.ts does): the process under test is the only one.
  t = await createTestApp()
})
afterAll(async () => {
  for (const run of processes) if (run.child.exitCode === null) run.child.kill('SIGKILL')
  await t.close()
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
})
