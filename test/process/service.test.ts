import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { REGION_ID } from '../helpers/fixtures.js'
import { PROJECT_ROOT, runNpmStart, runTenantry, seedDataFolder } from '../helpers/process.js'

const folders: string[] = []
function freshFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenantry-process-'))
  folders.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, init)
  return { status: response.status, body: await response.json() }
}

describe('the service process', () => {
  it('starts on an empty folder, prints the login, serves, stops on SIGTERM and keeps its data', async () => {
    const dataDir = freshFolder()
    const env = { TENANTRY_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' }

    const first = runTenantry(['serve'], env)
    let stdout = ''
    first.child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const [, url] = await first.waitFor(/Tenantry listening on (http:\/\/[^"\s]+)/)
    const [, email, password] = await first.waitFor(/log in as (\S+) with password (\S+)/)
    // The generated password is on standard error only, never in a JSON log line.
    expect(stdout).not.toContain(password)
    expect(stdout).toContain('generated administrator password is on standard error')
    expect((await json(`${url}/readyz`)).body).toEqual({ status: 'ready' })
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600)

    const token = (
      await json(`${url}/v1/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: email, password }),
      })
    ).body.token
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const created = await json(`${url}/v1/tenants`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Survives restarts', regionId: REGION_ID }),
    })
    expect(created.status).toBe(201)

    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)

    const second = runTenantry(['serve'], env)
    const [, url2] = await second.waitFor(/Tenantry listening on (http:\/\/[^"\s]+)/)
    // Same admin, same password: the second start changed nothing.
    const again = await json(`${url2}/v1/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: email, password }),
    })
    expect(again.status).toBe(200)
    const read = await json(`${url2}/v1/tenants/${created.body.result.id}`, {
      headers: { authorization: `Bearer ${again.body.token}` },
    })
    expect(read.status).toBe(200)
    expect(read.body.result.name).toBe('Survives restarts')
    expect(second.output()).not.toMatch(/with password/)
    second.child.kill('SIGINT')
    expect(await second.exited).toBe(0)
  }, 180_000)

  it('runs on the Node LTS the project depends on under `npm start`, whatever the system Node is', async () => {
    const dataDir = freshFolder()
    await seedDataFolder(dataDir)
    const run = runNpmStart({ TENANTRY_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' })
    try {
      const [, url] = await run.waitFor(/Tenantry listening on (http:\/\/[^"\s]+)/, 120_000)
      const metrics = await (await fetch(`${url}/metrics`)).text()
      const projectNode = JSON.parse(
        readFileSync(join(PROJECT_ROOT, 'node_modules/node/package.json'), 'utf8'),
      )
      expect(projectNode.version).toMatch(/^24\./)
      expect(metrics).toMatch(
        new RegExp(`^nodejs_version_info\\{version="v${projectNode.version}",major="24",`, 'm'),
      )
    } finally {
      process.kill(-run.child.pid!, 'SIGTERM')
      await run.exited
    }
  }, 180_000)

  it('refuses to start on bad configuration, listing every problem at once', async () => {
    const run = runTenantry(['serve'], {
      PORT: 'eighty',
      DATABASE_URL: 'mysql://nope',
      TENANTRY_SECRET_KEY: 'c2hvcnQ=',
      LOG_LEVEL: 'chatty',
    })
    const code = await run.exited
    expect(code).not.toBe(0)
    const output = run.output()
    for (const name of ['PORT', 'DATABASE_URL', 'TENANTRY_SECRET_KEY', 'LOG_LEVEL'])
      expect(output).toContain(name)
  })

  it('stops with a non-zero exit when a migration fails', async () => {
    const dataDir = freshFolder()
    // A migrated database whose record of applied migrations is lost: the first migration then runs into
    // the tables it would create. Starting from the run's template avoids a slow initdb when there is one.
    const template = inject('pgliteTemplatePath')
    const pglite = await PGlite.create({
      dataDir: join(dataDir, 'pgdata'),
      ...(template ? { loadDataDir: new Blob([readFileSync(template)]) } : {}),
    })
    await pglite.exec(template ? 'drop table kysely_migration' : 'create table platform (unexpected int)')
    await pglite.close()
    const run = runTenantry(['migrate'], { TENANTRY_DATA_DIR: dataDir })
    expect(await run.exited).not.toBe(0)
    expect(run.output()).toMatch(/migration.*failed/i)
  }, 180_000)
})
