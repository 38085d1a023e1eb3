import { beforeAll, describe, expect, it } from 'vitest'
import { ERROR_REASONS } from '../../src/errors.js'
import { REGION_ID } from '../helpers/fixtures.js'
import { createTestApp, useTestApp } from '../helpers/test-app.js'

const t = useTestApp()
let token: string
beforeAll(async () => {
  token = await t.adminToken()
})

describe('the error envelope', () => {
  it('answers unknown routes with 404 in the envelope', async () => {
    const response = await t.request('GET', '/v1/nothing-here', { token })
    expect(response.status).toBe(404)
    expect(response.body.error).toMatchObject({ code: 404, reason: 'not_found' })
    expect(response.body.error.requestId).toBe(response.headers['x-request-id'])
  })

  it('answers malformed JSON with 400 invalid_json', async () => {
    const response = await t.request('POST', '/v1/tenants', { token, body: '{"name": "x",' })
    expect(response.status).toBe(400)
    expect(response.body.error.reason).toBe('invalid_json')
  })

  it('answers a non-JSON body with 415', async () => {
    const response = await t.request('POST', '/v1/tenants', {
      token,
      body: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(response.status).toBe(415)
    expect(response.body.error.reason).toBe('unsupported_media_type')
  })

  it('answers a body over 1 MiB with 413', async () => {
    const response = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: 'big', regionId: REGION_ID, description: 'x'.repeat(1024 * 1024) },
    })
    expect(response.status).toBe(413)
    expect(response.body.error.reason).toBe('payload_too_large')
  })

  it('answers a body that is not an object with 400', async () => {
    const response = await t.request('POST', '/v1/tenants', { token, body: '"just a string"' })
    expect(response.status).toBe(400)
    expect(response.body.error.reason).toBe('validation_failed')
  })

  it('answers a bad path parameter with 400 naming it', async () => {
    const response = await t.request('GET', '/v1/tenants/not-a-uuid', { token })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('tenantId')
  })

  it('never shows an internal message on a 5xx', async () => {
    const other = await createTestApp()
    const adminToken = await other.adminToken()
    expect((await other.request('GET', '/v1/regions', { token: adminToken })).status).toBe(200)
    await other.database.handle.close()
    const response = await other.request('GET', '/v1/regions', { token: adminToken })
    expect(response.status).toBe(500)
    expect(response.body.error.reason).toBe('internal')
    expect(response.body.error.message).not.toMatch(/pglite|closed|pool|sql|Error:/i)
    expect(other.logs.join('')).toContain(response.body.error.requestId)
    await other.close() // the app, and its throw-away database
  })
})

describe('request ids', () => {
  it('echoes a well-formed X-Request-Id and makes one otherwise', async () => {
    const echoed = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123.trace' } })
    expect(echoed.headers['x-request-id']).toBe('abc-123.trace')
    const made = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } })
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe('health, docs and reference data', () => {
  it('answers /healthz and /readyz without credentials', async () => {
    expect((await t.request('GET', '/healthz')).body).toEqual({ status: 'ok' })
    expect((await t.request('GET', '/readyz')).body).toEqual({ status: 'ready' })
  })

  it('publishes an OpenAPI 3.1 document listing the routes and every error reason', async () => {
    const response = await t.request('GET', '/openapi.json')
    expect(response.status).toBe(200)
    const doc = response.body
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.paths).toHaveProperty('/v1/tenants')
    expect(doc.paths).toHaveProperty('/v1/tokens')
    const text = JSON.stringify(doc)
    for (const reason of Object.keys(ERROR_REASONS)) expect(text).toContain(reason)
  })

  it('documents both bulk forms of POST /v1/users beside the single one, with dryRun', async () => {
    const post = (await t.request('GET', '/openapi.json')).body.paths['/v1/users'].post
    const json = post.requestBody.content['application/json'].schema
    expect(json.anyOf).toHaveLength(2)
    expect(json.anyOf[0].properties).toHaveProperty('email')
    expect(json.anyOf[1]).toMatchObject({ type: 'array', maxItems: 1000 })
    expect(json.anyOf[1].items.properties).toHaveProperty('tenantStatus')
    expect(post.requestBody.content['application/x-ndjson'].schema.properties).toHaveProperty('tenantId')
    expect(post.responses['200'].content['application/json'].schema.properties).toHaveProperty('summary')
    expect(
      post.responses['201'].content['application/json'].schema.properties.result.properties,
    ).toHaveProperty('email')
    expect(post.parameters.map((p: { name: string }) => p.name)).toContain('dryRun')
  })

  it('serves the interactive reference at /docs', async () => {
    const response = await t.request('GET', '/docs/')
    expect(response.status).toBe(200)
    expect(String(response.body)).toContain('<html')
  })

  it('lists the six seeded regions with fixed ids, and one by id', async () => {
    const response = await t.request('GET', '/v1/regions', { token })
    expect(response.body.result.map((r: { name: string }) => r.name).sort()).toEqual(
      ['ap-southeast-2', 'ca-central-1', 'eu-central-1', 'eu-west-1', 'us-east-1', 'us-west-2'].sort(),
    )
    const one = await t.request('GET', `/v1/regions/${REGION_ID}`, { token })
    expect(one.body.result).toMatchObject({ id: REGION_ID, name: 'us-east-1' })
    const missing = await t.request('GET', '/v1/regions/00000000-0000-4000-8000-000000000000', { token })
    expect(missing.status).toBe(404)
  })

  it('lists IANA time zones', async () => {
    const response = await t.request('GET', '/v1/timezones', { token })
    expect(response.body.result).toContain('America/New_York')
    expect(response.body.result).toContain('UTC')
  })
})

describe('logging', () => {
  it('never writes credentials to the log', async () => {
    const password = 'admin-password-for-tests'
    const issued = await t.request('POST', '/v1/tokens', {
      body: { username: 'admin@tenantry.test', password },
    })
    await t.request('POST', '/v1/login', { token: issued.body.token })
    await t.request('POST', '/v1/login', {
      authorization: `Basic ${Buffer.from(`admin@tenantry.test:${password}`).toString('base64')}`,
    })
    await t.request('GET', '/v1/invitations/some-secret-invitation-token-value')
    const logs = t.logs.join('')
    expect(logs).toContain('"url":"/v1/login"')
    expect(logs).not.toContain(password)
    expect(logs).not.toContain(issued.body.token)
    expect(logs).not.toContain(Buffer.from(`admin@tenantry.test:${password}`).toString('base64'))
    expect(logs).not.toContain('some-secret-invitation-token-value')
  })
})
