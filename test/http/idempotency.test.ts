import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { sweepIdempotencyKeys } from '../../src/http/idempotency.js'
import { REGION_ID, uniqueName } from '../helpers/fixtures.js'
import { useTestApp } from '../helpers/test-app.js'

const t = useTestApp()
let token: string
beforeAll(async () => {
  token = await t.adminToken()
})

async function tenantsNamed(name: string): Promise<number> {
  const rows = await t.database.handle.db
    .selectFrom('tenants')
    .select('id')
    .where('name', '=', name)
    .execute()
  return rows.length
}

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and body, creating once', async () => {
    const body = { name: uniqueName('Idem'), regionId: REGION_ID }
    const headers = { 'idempotency-key': 'create-acme-1' }
    const first = await t.request('POST', '/v1/tenants', { token, body, headers })
    expect(first.status).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()

    const replay = await t.request('POST', '/v1/tenants', { token, body, headers })
    expect(replay.status).toBe(200)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.headers.location).toBe(first.headers.location)
    expect(replay.body).toEqual(first.body)
    expect(await tenantsNamed(body.name)).toBe(1)
  })

  it('answers 409 idempotency_key_reused for the same key with another body', async () => {
    const headers = { 'idempotency-key': 'create-acme-2' }
    await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName(), regionId: REGION_ID },
      headers,
    })
    const other = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName(), regionId: REGION_ID },
      headers,
    })
    expect(other.status).toBe(409)
    expect(other.body.error.reason).toBe('idempotency_key_reused')
  })

  it('replays failures too, and scopes keys to the caller', async () => {
    const headers = { 'idempotency-key': 'bad-request' }
    const body = { name: uniqueName(), regionId: 'not-a-region' }
    const first = await t.request('POST', '/v1/tenants', { token, body, headers })
    expect(first.status).toBe(400)
    const again = await t.request('POST', '/v1/tenants', { token, body, headers })
    expect(again.status).toBe(400)
    expect(again.headers['idempotent-replayed']).toBe('true')
  })

  it('runs a concurrent duplicate at most once', async () => {
    const body = { name: uniqueName('Concurrent'), regionId: REGION_ID }
    const headers = { 'idempotency-key': 'concurrent-1' }
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => t.request('POST', '/v1/tenants', { token, body, headers })),
    )
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1)
    for (const r of responses) expect([200, 201, 409]).toContain(r.status)
    expect(await tenantsNamed(body.name)).toBe(1)
  })

  it('forgets a key after 24 hours', async () => {
    const headers = { 'idempotency-key': 'expires' }
    const body = { name: uniqueName('Expiring'), regionId: REGION_ID }
    expect((await t.request('POST', '/v1/tenants', { token, body, headers })).status).toBe(201)
    t.clock.advance(24 * 3600 * 1000 + 1000)
    token = await t.tokenFor('admin@tenantry.test', 'admin-password-for-tests')
    const fresh = await t.request('POST', '/v1/tenants', { token, body, headers })
    // Runs again for real: the name is now taken.
    expect(fresh.status).toBe(409)
    expect(fresh.body.error.reason).toBe('tenant_name_taken')
  })

  it('refuses an over-long key', async () => {
    const response = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName(), regionId: REGION_ID },
      headers: { 'idempotency-key': 'k'.repeat(256) },
    })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('Idempotency-Key')
  })
})

describe('ETag and If-Match', () => {
  it('tags single reads, answers 304 to If-None-Match, and refuses a PUT with a stale If-Match', async () => {
    token = await t.tokenFor('admin@tenantry.test', 'admin-password-for-tests')
    const created = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName('Etag'), regionId: REGION_ID },
    })
    const url = `/v1/tenants/${created.body.result.id}`
    const read = await t.request('GET', url, { token })
    const etag = read.headers.etag as string
    expect(etag).toMatch(/^W\/".+"$/)

    const unchanged = await t.request('GET', url, { token, headers: { 'if-none-match': etag } })
    expect(unchanged.status).toBe(304)

    const first = await t.request('PUT', url, {
      token,
      body: { description: 'one' },
      headers: { 'if-match': etag },
    })
    expect(first.status).toBe(200)
    const stale = await t.request('PUT', url, {
      token,
      body: { description: 'two' },
      headers: { 'if-match': etag },
    })
    expect(stale.status).toBe(412)
    expect(stale.body.error.reason).toBe('precondition_failed')
    const after = await t.request('GET', url, { token })
    expect(after.body.result.description).toBe('one')
    expect(after.headers.etag).not.toBe(etag)
  })
})

describe('stored responses at rest', () => {
  it('keeps a shown-once secret out of the database, and still replays it to the caller', async () => {
    // The attack: a reader of the database (a backup, a replica) looks for live secrets among the
    // responses kept for replay. The replay itself is the caller's own answer again (docs/api.md#safe-retries).
    const created = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName('Idem'), regionId: REGION_ID },
    })
    const tenant = created.body.result as { id: string }
    const headers = { 'idempotency-key': 'key-with-secret' }
    const body = { name: uniqueName('Key'), roleId: ROLE_IDS.agent }
    const first = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, { token, body, headers })
    expect(first.status).toBe(201)
    const secret = first.body.result.secret as string
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43,}$/)

    const rows = await t.database.handle.db.selectFrom('idempotency_keys').selectAll().execute()
    expect(rows.some((row) => row.key === 'key-with-secret')).toBe(true)
    expect(JSON.stringify(rows)).not.toContain(secret)

    const replay = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, { token, body, headers })
    expect(replay.status).toBe(200)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toEqual(first.body)
  })

  it('refuses a stored response moved to another caller or key (it does not decrypt there)', async () => {
    const headers = { 'idempotency-key': 'moved-response' }
    const body = { name: uniqueName('Idem'), regionId: REGION_ID }
    expect((await t.request('POST', '/v1/tenants', { token, body, headers })).status).toBe(201)
    const stored = await t.database.handle.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('key', '=', 'moved-response')
      .executeTakeFirstOrThrow()
    // A row written by someone with database access: another key's sealed answer under this key.
    const other = { 'idempotency-key': 'victim-key' }
    const victimBody = { name: uniqueName('Idem'), regionId: REGION_ID }
    expect((await t.request('POST', '/v1/tenants', { token, body: victimBody, headers: other })).status).toBe(
      201,
    )
    await t.database.handle.db
      .updateTable('idempotency_keys')
      .set({ response_body: stored.response_body })
      .where('key', '=', 'victim-key')
      .execute()
    const replay = await t.request('POST', '/v1/tenants', { token, body: victimBody, headers: other })
    expect(replay.status).toBe(409)
    expect(replay.body.error.reason).toBe('idempotency_key_reused')
    expect(JSON.stringify(replay.body)).not.toContain(body.name)
  })
})

describe('the idempotency sweep', () => {
  it('deletes records past the 24-hour window and keeps fresh ones', async () => {
    token = await t.tokenFor('admin@tenantry.test', 'admin-password-for-tests')
    await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName(), regionId: REGION_ID },
      headers: { 'idempotency-key': 'sweep-old' },
    })
    t.clock.advance(24 * 3600 * 1000 + 1000)
    token = await t.tokenFor('admin@tenantry.test', 'admin-password-for-tests')
    await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName(), regionId: REGION_ID },
      headers: { 'idempotency-key': 'sweep-new' },
    })
    await sweepIdempotencyKeys(t.database.handle.db, t.clock.now())
    const keys = (await t.database.handle.db.selectFrom('idempotency_keys').select('key').execute()).map(
      (r) => r.key,
    )
    expect(keys).toContain('sweep-new')
    expect(keys).not.toContain('sweep-old')
  })
})
