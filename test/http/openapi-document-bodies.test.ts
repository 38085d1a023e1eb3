import swagger from '@fastify/swagger'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentValidators, watchBodiesAgainstDocument } from '../helpers/document-conformance.js'
import { createTenantAsAdmin, REGION_ID, uniqueName } from '../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * The OpenAPI document says what the service accepts (issue 29 item 7): request bodies are open (unknown
 * fields are ignored, docs/api.md#conventions), conditional requirements are in the document, and the formats the
 * service checks are published. Every test app also holds each body it is sent to the document
 * (helpers/document-conformance.ts); the last test shows that watcher failing on a closed document.
 */
let t: TestApp
let token: string
let tenantId: string
let bodyOf: ReturnType<typeof documentValidators>

beforeAll(async () => {
  t = await createTestApp()
  token = await t.adminToken()
  tenantId = (await createTenantAsAdmin(t)).id
  bodyOf = documentValidators(t.app.swagger() as never)
})
afterAll(async () => {
  await t.close()
})

function documentAllows(method: string, url: string, body: unknown): boolean {
  const validate = bodyOf(method, url)
  if (!validate) throw new Error(`the document has no JSON body for ${method} ${url}`)
  return validate(body) === true
}

describe('request bodies in the document', () => {
  it('never declare additionalProperties: false', async () => {
    const document = t.app.swagger() as { paths: Record<string, Record<string, { requestBody?: unknown }>> }
    const closed = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) =>
          JSON.stringify(operation.requestBody ?? {}).includes('"additionalProperties":false'),
        )
        .map(([method]) => `${method} ${path}`),
    )
    expect(closed).toEqual([])
    // …and an unknown field is indeed accepted (and ignored).
    const body = { name: uniqueName(), regionId: REGION_ID, favouriteColour: 'teal' }
    expect(documentAllows('POST', '/v1/tenants', body)).toBe(true)
    const created = await t.request('POST', '/v1/tenants', { token, body })
    expect(created.status).toBe(201)
    expect(created.body.result.favouriteColour).toBeUndefined()
  })

  it('require type and properties of an integration, flat or inside attributes, as the service does', async () => {
    const properties = { endpointPrefix: '' }
    const cases: [unknown, boolean][] = [
      [{}, false],
      [{ type: 'rest' }, false],
      [{ properties }, false],
      [{ attributes: { type: 'rest' } }, false],
      [{ type: 'rest', properties }, true],
      [{ attributes: { type: 'rest', properties } }, true],
    ]
    for (const [body, allowed] of cases) {
      for (const url of [
        '/v1/tenants/:tenantId/integrations',
        '/v1/tenants/:tenantId/integrations/:integrationId',
      ]) {
        expect(documentAllows('POST', url, body), `${url} ${JSON.stringify(body)}`).toBe(allowed)
      }
      const answer = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, {
        token,
        body: allowed ? { ...(body as object), name: uniqueName('Rest') } : body,
      })
      expect(answer.status, JSON.stringify(body)).toBe(allowed ? 201 : 400)
      if (!allowed) expect(answer.body.error.attribute).toBeDefined()
    }
  })

  it('publish what the service checks: a time zone, a webhook URL, an OIDC provider’s issuer', async () => {
    const refusals: [string, string, string, unknown, string][] = [
      [
        'POST',
        '/v1/tenants',
        '/v1/tenants',
        { name: uniqueName(), regionId: REGION_ID, timezone: '' },
        'timezone',
      ],
      ['PUT', '/v1/tenants/:tenantId', `/v1/tenants/${tenantId}`, { timezone: 'not a zone!' }, 'timezone'],
      [
        'POST',
        '/v1/tenants/:tenantId/webhooks',
        `/v1/tenants/${tenantId}/webhooks`,
        { url: 'no url at all', events: ['tenant.*'] },
        'url',
      ],
      [
        'POST',
        '/v1/tenants/:tenantId/identity-providers',
        `/v1/tenants/${tenantId}/identity-providers`,
        { name: 'OIDC', identityProvider: 'oidc', clientId: 'c', clientSecret: 's' },
        'issuer',
      ],
    ]
    for (const [method, route, url, body, field] of refusals) {
      expect(documentAllows(method, route, body), `${method} ${route} ${JSON.stringify(body)}`).toBe(false)
      const answer = await t.request(method, url, { token, body })
      expect(answer.status, `${method} ${url}`).toBe(400)
      expect(Object.keys(answer.body.error.attribute), `${method} ${url}`).toContain(field)
    }
    expect(documentAllows('PUT', '/v1/tenants/:tenantId', { timezone: 'US/Eastern' })).toBe(true)
    expect(
      (await t.request('PUT', `/v1/tenants/${tenantId}`, { token, body: { timezone: 'US/Eastern' } })).status,
    ).toBe(200)
  })
})

describe('the watcher every test app runs', () => {
  it('reports a body the service accepts but the document refuses', async () => {
    // A closed body schema, published as it is: the validator drops the unknown field and answers 200.
    const app = Fastify({ ajv: { customOptions: { removeAdditional: true } } })
    await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'probe', version: '1' } } })
    app.post(
      '/things',
      {
        schema: {
          body: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false },
        },
      },
      async () => ({ ok: true }),
    )
    const violations = watchBodiesAgainstDocument(app)
    await app.ready()
    const answer = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', extra: 1 } })
    expect(answer.statusCode).toBe(200)
    expect(violations).toHaveLength(1)
    expect(violations[0]).toContain('POST /things answered 200 to a body the document refuses')
    await app.close()
  })
})
