import { gunzipSync } from 'node:zlib'
import { beforeAll, describe, expect, it } from 'vitest'
import { wantsPrettyLogs } from '../../src/logger.js'
import { insertUser, REGION_ID } from '../helpers/fixtures.js'
import { createTestApp, useTestApp } from '../helpers/test-app.js'

/** docs/operations.md inside one process: /metrics, one log line per request, CORS, compression, the 413. */
const t = useTestApp({ env: { TENANTRY_CORS_ORIGINS: 'https://console.example.com' } })
let token: string
beforeAll(async () => {
  token = await t.adminToken()
})

function metric(text: string, pattern: RegExp): number | undefined {
  const line = text.split('\n').find((l) => pattern.test(l))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

describe('/metrics', () => {
  it('counts requests by route and status, login failures, and the outbox by kind and status', async () => {
    await t.request('GET', '/v1/regions', { token })
    await t.request('GET', '/v1/tenants/00000000-0000-4000-8000-000000000000', { token })
    const user = await insertUser(t.ctx.db)
    const before = await t.request('GET', '/metrics')
    const failuresBefore = metric(before.body, /^tenantry_login_failures_total\{kind="password"\}/) ?? 0
    const wrong = await t.request('POST', '/v1/tokens', {
      body: { username: user.email, password: 'not the password' },
    })
    expect(wrong.status).toBe(401)
    await t.request('POST', `/v1/tenants`, { token, body: { name: 'Metrics Co', regionId: REGION_ID } })

    const response = await t.request('GET', '/metrics')
    expect(response.status).toBe(200)
    expect(String(response.headers['content-type'])).toContain('text/plain')
    const text = response.body as string
    expect(
      metric(
        text,
        /^tenantry_http_request_duration_seconds_count\{method="GET",route="\/v1\/regions",status="200"\}/,
      ),
    ).toBeGreaterThanOrEqual(1)
    expect(
      metric(
        text,
        /^tenantry_http_request_duration_seconds_count\{method="GET",route="\/v1\/tenants\/:tenantId",status="404"\}/,
      ),
    ).toBeGreaterThanOrEqual(1)
    expect(text).toMatch(/^tenantry_http_request_duration_seconds_bucket\{le="0.005",/m)
    expect(metric(text, /^tenantry_login_failures_total\{kind="password"\}/)).toBe(failuresBefore + 1)
    expect(text).toContain('# TYPE tenantry_outbox_messages gauge')
    expect(text).toContain('# TYPE tenantry_bulk_rows_total counter')
  })

  it('carries the standard Node.js process series that the usual dashboards read', async () => {
    const text = (await t.request('GET', '/metrics')).body as string
    for (const series of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_space_size_used_bytes',
      'nodejs_gc_duration_seconds',
      'nodejs_active_handles_total',
    ]) {
      expect(text, series).toMatch(new RegExp(`^# TYPE ${series} `, 'm'))
    }
    expect(text).toMatch(new RegExp(`^nodejs_version_info\\{version="${process.version}",`, 'm'))
  })

  it('reports queued outbox rows by kind with the age of the oldest, read at scrape time', async () => {
    const created = new Date(t.clock.now().getTime() - 120_000)
    await t.ctx.db
      .insertInto('outbox')
      .values({
        id: '0190a000-0000-7000-8000-000000000001',
        tenant_id: null,
        kind: 'metrics-test',
        payload: JSON.stringify({}) as never,
        next_attempt_at: created,
        created,
      })
      .execute()
    const text = (await t.request('GET', '/metrics')).body as string
    expect(metric(text, /^tenantry_outbox_messages\{kind="metrics-test",status="queued"\}/)).toBe(1)
    expect(metric(text, /^tenantry_outbox_oldest_queued_age_seconds\{kind="metrics-test"\}/)).toBe(120)
  })
})

describe('request logs', () => {
  it('writes one line per request, with status and time, and health probes only at debug', async () => {
    const from = t.logs.length
    const response = await t.request('GET', '/v1/regions', {
      token,
      headers: { 'x-request-id': 'one-line-1' },
    })
    expect(response.status).toBe(200)
    await t.request('GET', '/healthz')
    await t.request('GET', '/readyz')
    const lines = t.logs.slice(from).map((line) => JSON.parse(line))
    const mine = lines.filter((line) => line.reqId === 'one-line-1')
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({
      msg: 'request completed',
      res: { statusCode: 200 },
      req: { url: '/v1/regions' },
    })
    expect(typeof mine[0].responseTime).toBe('number')
    // LOG_LEVEL is info in tests: the probes' debug lines are not written.
    expect(lines.some((line) => /healthz|readyz/.test(line.req?.url ?? ''))).toBe(false)
  })

  it('holds no credential: no header, and one-time tokens cut out of the URL', async () => {
    const from = t.logs.length
    const invitationToken = 'A'.repeat(43)
    await t.request('GET', `/v1/invitations/${invitationToken}?token=${invitationToken}`, {
      token,
      headers: { 'x-request-id': 'no-credentials-1' },
    })
    const written = t.logs.slice(from).filter((line) => line.includes('no-credentials-1'))
    expect(written).toHaveLength(1)
    expect(JSON.parse(written[0]!).req.url).toBe('/v1/invitations/[redacted]?token=[redacted]')
    expect(written[0]).not.toContain(invitationToken)
    expect(written[0]).not.toContain(token)
  })
})

describe('log format', () => {
  it('is pretty at a terminal and JSON otherwise, unless LOG_FORMAT says', () => {
    expect(wantsPrettyLogs(undefined, true)).toBe(true)
    expect(wantsPrettyLogs(undefined, false)).toBe(false)
    expect(wantsPrettyLogs('json', true)).toBe(false)
    expect(wantsPrettyLogs('pretty', false)).toBe(true)
  })
})

describe('CORS', () => {
  it('lets a configured origin call the API (preflight and request) and no other origin', async () => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/tenants',
      headers: {
        origin: 'https://console.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    })
    expect(preflight.statusCode).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe('https://console.example.com')
    expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST')

    const allowed = await t.request('GET', '/v1/regions', {
      token,
      headers: { origin: 'https://console.example.com' },
    })
    expect(allowed.headers['access-control-allow-origin']).toBe('https://console.example.com')
    expect(String(allowed.headers['access-control-expose-headers'])).toContain('x-request-id')

    const other = await t.request('GET', '/v1/regions', {
      token,
      headers: { origin: 'https://evil.example.net' },
    })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('sends no CORS headers when TENANTRY_CORS_ORIGINS is not set', async () => {
    const plain = await createTestApp({ database: t.database })
    try {
      const response = await plain.request('GET', '/v1/regions', {
        token,
        headers: { origin: 'https://console.example.com' },
      })
      expect(response.status).toBe(200)
      expect(response.headers['access-control-allow-origin']).toBeUndefined()
    } finally {
      await plain.app.close()
    }
  })
})

describe('compression', () => {
  it('compresses a response over 1 KiB when asked, and leaves small ones alone', async () => {
    const big = await t.app.inject({
      method: 'GET',
      url: '/openapi.json',
      headers: { 'accept-encoding': 'gzip' },
    })
    expect(big.statusCode).toBe(200)
    expect(big.headers['content-encoding']).toBe('gzip')
    const document = JSON.parse(gunzipSync(big.rawPayload).toString('utf8'))
    expect(document.openapi).toBe('3.1.0')
    expect(big.rawPayload.length).toBeLessThan(JSON.stringify(document).length / 3)

    const small = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'accept-encoding': 'gzip' },
    })
    expect(small.headers['content-encoding']).toBeUndefined()
    expect(small.json()).toEqual({ status: 'ok' })
  })
})

describe('an oversized body over a real connection', () => {
  /** The body as a client uploading a file sends it: 64 KiB pieces, a little apart, chunked. */
  function slowBody(bytes: Uint8Array): ReadableStream<Uint8Array> {
    let offset = 0
    return new ReadableStream({
      async pull(controller) {
        if (offset >= bytes.length) return controller.close()
        await new Promise((resolve) => setTimeout(resolve, 5))
        controller.enqueue(bytes.subarray(offset, offset + 65_536))
        offset += 65_536
      },
    })
  }

  it('is answered 413 after the body is read: 40 of 40 uploads with fetch read the answer', async () => {
    // Without the drain, the connection closes while the client still writes: some of these see EPIPE.
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const bytes = new TextEncoder().encode(
      JSON.stringify({ name: 'big', regionId: REGION_ID, description: 'x'.repeat(2 * 1024 * 1024) }),
    )
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, async () => {
        try {
          const response = await fetch(`${address}/v1/tenants`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: slowBody(bytes),
            duplex: 'half',
          } as RequestInit)
          const answer = (await response.json()) as { error: { reason: string } }
          return `${response.status} ${answer.error.reason}`
        } catch (error) {
          const cause = (error as Error & { cause?: { code?: string } }).cause
          return `failed: ${cause?.code ?? (error as Error).message}`
        }
      }),
    )
    expect(outcomes).toEqual(Array(40).fill('413 payload_too_large'))
  }, 60_000)
})

describe('If-Match', () => {
  it('is checked in the write itself: of 20 concurrent PUTs with one If-Match, one gets 200 and 19 get 412', async () => {
    const created = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: 'Contended Co', regionId: REGION_ID },
    })
    const url = `/v1/tenants/${created.body.result.id}`
    const etag = String((await t.request('GET', url, { token })).headers.etag)
    expect(etag).toMatch(/^W\/"\d+\./)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request('PUT', url, { token, headers: { 'if-match': etag }, body: { description: `writer ${i}` } }),
      ),
    )
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses).toEqual([200, ...Array(19).fill(412)])
    const winner = answers.find((answer) => answer.status === 200)!
    const now = await t.request('GET', url, { token })
    expect(now.body.result.description).toBe(winner.body.result.description)
    // The new version's ETag works once more; the old one, a made-up one and an unknown id do not.
    expect((await t.request('PUT', url, { token, headers: { 'if-match': etag }, body: {} })).status).toBe(412)
    expect(
      (await t.request('PUT', url, { token, headers: { 'if-match': 'W/"nonsense"' }, body: {} })).status,
    ).toBe(412)
    const next = await t.request('PUT', url, {
      token,
      headers: { 'if-match': String(now.headers.etag) },
      body: { description: 'after' },
    })
    expect(next.status).toBe(200)
    const missing = await t.request('PUT', '/v1/tenants/0190a000-0000-7000-8000-0000000000ff', {
      token,
      headers: { 'if-match': String(now.headers.etag) },
      body: {},
    })
    expect(missing.status).toBe(404)
  })
})

describe('If-Match on a user', () => {
  it('lets one of 20 concurrent PUTs with the same If-Match through', async () => {
    const user = await insertUser(t.ctx.db)
    const url = `/v1/users/${user.id}`
    const etag = String((await t.request('GET', url, { token })).headers.etag)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request('PUT', url, { token, headers: { 'if-match': etag }, body: { firstName: `Writer${i}` } }),
      ),
    )
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array(19).fill(412)])
  })
})
