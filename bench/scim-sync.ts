/**
 * An initial SCIM sync, timed (issue 31): N users pushed over C connections the way Okta and Entra ID
 * do it — for each user `GET /Users?filter=userName eq "…"` (not found), then `POST /Users`. Against the
 * built server as production runs it (start it like `npm run bench` does), on a fresh tenant.
 *
 *   npm run build && node --import tsx bench/scim-sync.ts [--users 10000] [--connections 10]
 *
 * With BENCH_DATABASE_URL a throw-away database on that server; without it the embedded database.
 */
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { PERMISSIONS, REGIONS } from '../src/access/permissions.js'
import { call, issueToken } from './lib/arrange.js'
import { createBenchDatabase } from './lib/database.js'
import { seedDatabase } from './lib/seed.js'
import { startTenantry } from './lib/services.js'

const log = (message: string) => process.stderr.write(`${message}\n`)

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      users: { type: 'string', default: '10000' },
      connections: { type: 'string', default: '10' },
      'server-entry': { type: 'string', default: 'dist/src/main.js' },
    },
  })
  const users = Number(values.users)
  const connections = Number(values.connections)
  const database = await createBenchDatabase(process.env.BENCH_DATABASE_URL)
  const admin = { email: 'admin@bench.test', password: randomBytes(12).toString('base64url') }
  const benchUser = { email: 'tenant-admin@bench.test', password: randomBytes(12).toString('base64url') }
  await seedDatabase(database, { admin, benchUser, logins: 0, invitees: 0 })
  const server = await startTenantry(database, admin, {
    serverEntry: values['server-entry'] as string,
    serverLog: undefined,
    profileDir: undefined,
    serverEnv: {},
  })
  try {
    const token = await issueToken(server.url, admin.email, admin.password)
    const tenant = (
      await call(server.url, 'POST', '/v1/tenants', {
        token,
        body: { name: 'Sync', regionId: REGIONS[0]!.id },
      })
    ).body.result
    const role = (
      await call(server.url, 'POST', `/v1/tenants/${tenant.id}/roles`, {
        token,
        body: { name: 'Directory', permissions: PERMISSIONS },
      })
    ).body.result
    const key = await call(server.url, 'POST', `/v1/tenants/${tenant.id}/api-keys`, {
      token,
      body: { name: 'Directory', roleId: role.id, scope: 'scim' },
    })
    if (key.status !== 201) throw new Error(`scim key: ${JSON.stringify(key.body)}`)
    const base = `${server.url}/scim/v2/tenants/${tenant.id}`
    const headers = {
      authorization: `Bearer ${key.body.result.token}`,
      'content-type': 'application/scim+json',
    }
    let next = 0
    let failures = 0
    const latencies: number[] = []
    const worker = async () => {
      for (;;) {
        const n = next++
        if (n >= users) return
        const userName = `sync-${n}@bench.test`
        const started = performance.now()
        const found = await fetch(`${base}/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`, {
          headers,
        })
        const list = (await found.json()) as { totalResults: number }
        if (found.status !== 200 || list.totalResults !== 0) failures++
        const created = await fetch(`${base}/Users`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
            userName,
            externalId: `ext-${n}`,
            name: { givenName: 'Sync', familyName: `User ${n}` },
            emails: [{ value: userName, type: 'work', primary: true }],
            active: true,
          }),
        })
        await created.arrayBuffer()
        if (created.status !== 201) failures++
        latencies.push(performance.now() - started)
      }
    }
    const started = performance.now()
    await Promise.all(Array.from({ length: connections }, worker))
    const seconds = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1)
    const result = {
      database: database.describe,
      users,
      connections,
      seconds: Number(seconds.toFixed(1)),
      usersPerSecond: Number((users / seconds).toFixed(1)),
      perUserMs: { p50: at(0.5), p99: at(0.99) },
      failures,
    }
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  } finally {
    await server.stop()
    await database.drop()
  }
}

main().catch((error) => {
  log(`scim-sync: ${error instanceof Error ? error.stack : error}`)
  process.exit(1)
})
