/**
 * The console's tenant tree with 10,000 tenants (docs/console.md): the server time of `GET /console/tenants`
 * (the first level drawn, 100 roots a page) and of the tree with one node open, measured through
 * app.inject on the embedded in-memory database. Target: under 300 ms. Run: `npx tsx bench/console-tree.ts`.
 */
import { performance } from 'node:perf_hooks'
import { REGIONS } from '../src/access/permissions.js'
import { buildApp } from '../src/app.js'
import { bootstrap } from '../src/bootstrap.js'
import { systemClock } from '../src/clock.js'
import { loadConfig } from '../src/config.js'
import { resolveKeys } from '../src/crypto/keys.js'
import { newId as uuidv7 } from '../src/crypto/uuid7.js'
import { openDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { createLogger } from '../src/logger.js'

const ROOTS = 100
const CHILDREN = 99
const password = 'console bench password'
const config = loadConfig({
  DATABASE_URL: 'memory://',
  LOG_LEVEL: 'silent',
  TENANTRY_ADMIN_PASSWORD: password,
})
const database = await openDatabase({ url: 'memory://', dataDir: '.tmp' })
const db = database.db
await migrateToLatest(db)
const { platform } = await bootstrap(db, systemClock, { email: config.adminEmail, password })
const admin = await db
  .selectFrom('users')
  .select('id')
  .where('email', '=', config.adminEmail)
  .executeTakeFirstOrThrow()

// 100 roots with 99 children each: 10,000 tenants, written directly (the tree's reads are what is measured).
const now = new Date()
const rows = []
const base = {
  active: true,
  timezone: 'UTC',
  cxengage_identity_provider: 'enabled' as const,
  region_id: REGIONS[0]!.id,
  admin_user_id: admin.id,
  created: now,
  updated: now,
  created_by: admin.id,
  updated_by: admin.id,
}
for (let r = 0; r < ROOTS; r++) {
  const rootId = uuidv7()
  rows.push({
    ...base,
    id: rootId,
    name: `Root ${r}`,
    name_key: `root ${r}`,
    parent_id: platform.id,
    parent_ids: [platform.id],
  })
  for (let c = 0; c < CHILDREN; c++) {
    rows.push({
      ...base,
      id: uuidv7(),
      name: `Child ${r}.${c}`,
      name_key: `child ${r}.${c}`,
      parent_id: rootId,
      parent_ids: [platform.id, rootId],
    })
  }
}
for (let i = 0; i < rows.length; i += 500)
  await db
    .insertInto('tenants')
    .values(rows.slice(i, i + 500))
    .execute()

const { app } = await buildApp({
  db,
  config,
  clock: systemClock,
  keys: resolveKeys(config),
  logger: createLogger('silent'),
  platform,
})
await app.ready()

// Sign in through the console's own forms.
const field = (body: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1] ?? ''
const origin = config.publicUrl
const start = await app.inject({ method: 'GET', url: '/console/sign-in' })
// Before sign-in the form token is bound to this browser's own cookie, which the post carries back.
const browserCookie = String(start.headers['set-cookie']).split(';')[0]!
const post = (url: string, form: Record<string, string>) =>
  app.inject({
    method: 'POST',
    url,
    headers: { origin, cookie: browserCookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  })
const tokens = { formId: field(start.body, 'formId'), formToken: field(start.body, 'formToken') }
const signedIn = await post('/console/sign-in', {
  ...tokens,
  email: config.adminEmail,
  password,
  step: 'password',
  next: '/console/tenants',
})
const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!

async function measure(url: string, times = 30): Promise<{ median: number; p95: number }> {
  const samples: number[] = []
  for (let i = 0; i < times; i++) {
    const began = performance.now()
    const response = await app.inject({ method: 'GET', url, headers: { cookie } })
    samples.push(performance.now() - began)
    if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`)
  }
  samples.sort((a, b) => a - b)
  return { median: samples[Math.floor(times / 2)]!, p95: samples[Math.floor(times * 0.95)]! }
}

const count = await db.selectFrom('tenants').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()
const firstRoot = rows[0]!.id
const first = await measure('/console/tenants')
const opened = await measure(`/console/tenants?open=${firstRoot}`)
console.log(`tenants: ${count.n}`)
console.log(
  `GET /console/tenants             median ${first.median.toFixed(1)} ms, p95 ${first.p95.toFixed(1)} ms`,
)
console.log(
  `GET /console/tenants?open=<root> median ${opened.median.toFixed(1)} ms, p95 ${opened.p95.toFixed(1)} ms`,
)
await app.close()
await database.close()
