import Fastify from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { registerEtags } from '../../src/http/etag.js'
import { createTenantAsAdmin, uniqueEmail, uniqueName } from '../helpers/fixtures.js'
import { createRole } from '../helpers/roles.js'
import { createTestIdp } from '../helpers/saml-idp.js'
import { useTestApp } from '../helpers/test-app.js'

/**
 * If-Match on every PUT of a single resource (docs/api.md#safe-retries): checked in the UPDATE itself, so of
 * concurrent PUTs naming one version exactly one is stored. The table lists every such PUT, and the
 * OpenAPI document is the judge of "every": a PUT whose resource has a single-item GET (and so an ETag)
 * that is missing from the table fails the first test. The app's clock stands still (ManualClock), so
 * all writes share one clock reading: the version must move on anyway.
 */
const t = useTestApp()
let token: string
beforeAll(async () => {
  token = await t.adminToken()
})

/**
 * Resources are made through the API, so their first version is the frozen clock's instant, as every
 * write's: a write that did not move the version on would leave it where the If-Match found it.
 */
async function createUser(): Promise<string> {
  const created = await t.request('POST', '/v1/users', {
    token,
    body: { email: uniqueEmail('if-match'), roleId: ROLE_IDS.platformUser },
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return created.body.result.id
}

interface PutRoute {
  /** The operation's path as the OpenAPI document spells it. */
  path: string
  /** Makes a fresh resource and returns its URL. */
  create(): Promise<string>
  /** The body field each PUT changes, and the value writer `i` sends. */
  field: string
  value(i: number): unknown
}

const ROUTES: PutRoute[] = [
  {
    path: '/v1/tenants/{tenantId}',
    create: async () => `/v1/tenants/${(await createTenantAsAdmin(t)).id}`,
    field: 'description',
    value: (i) => `writer ${i}`,
  },
  {
    path: '/v1/users/{userId}',
    create: async () => `/v1/users/${await createUser()}`,
    field: 'firstName',
    value: (i) => `Writer${i}`,
  },
  {
    path: '/v1/tenants/{tenantId}/users/{userId}',
    create: async () => {
      const tenant = await createTenantAsAdmin(t)
      const added = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
        token,
        body: {
          email: uniqueEmail('member'),
          platformRoleId: ROLE_IDS.platformUser,
          roleId: ROLE_IDS.agent,
          status: 'accepted',
        },
      })
      expect(added.status, JSON.stringify(added.body)).toBe(201)
      return `/v1/tenants/${tenant.id}/users/${added.body.result.userId}`
    },
    field: 'workStationId',
    value: (i) => `desk-${i}`,
  },
  {
    path: '/v1/tenants/{tenantId}/roles/{roleId}',
    create: async () => {
      const tenant = await createTenantAsAdmin(t)
      const role = await createRole(t, tenant.id, { permissions: [] })
      return `/v1/tenants/${tenant.id}/roles/${role.id}`
    },
    field: 'description',
    value: (i) => `writer ${i}`,
  },
  {
    path: '/v1/tenants/{tenantId}/integrations/{integrationId}',
    create: async () => {
      const tenant = await createTenantAsAdmin(t)
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
        token,
        body: { type: 'rest', name: uniqueName('Integration'), properties: {} },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      return `/v1/tenants/${tenant.id}/integrations/${created.body.result.id}`
    },
    field: 'description',
    value: (i) => `writer ${i}`,
  },
  {
    path: '/v1/tenants/{tenantId}/api-keys/{keyId}',
    create: async () => {
      const tenant = await createTenantAsAdmin(t)
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
        token,
        body: { name: uniqueName('Key'), roleId: ROLE_IDS.agent },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      return `/v1/tenants/${tenant.id}/api-keys/${created.body.result.id}`
    },
    field: 'status',
    value: (i) => (i % 2 === 0 ? 'disabled' : 'enabled'),
  },
  {
    path: '/v1/tenants/{tenantId}/identity-providers/{id}',
    create: async () => {
      const tenant = await createTenantAsAdmin(t)
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
        token,
        body: { name: uniqueName('IdP'), identityProvider: 'saml', metadataFile: createTestIdp().metadata },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      return `/v1/tenants/${tenant.id}/identity-providers/${created.body.result.id}`
    },
    field: 'description',
    value: (i) => `writer ${i}`,
  },
  {
    path: '/v1/tenants/{tenantId}/webhooks/{webhookId}',
    create: async () => {
      const tenant = await createTenantAsAdmin(t)
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks`, {
        token,
        body: { url: 'https://hooks.example.com/created', events: ['tenant.*'] },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      return `/v1/tenants/${tenant.id}/webhooks/${created.body.result.id}`
    },
    field: 'url',
    value: (i) => `https://hooks.example.com/writer-${i}`,
  },
]

async function read(url: string): Promise<{ etag: string; result: Record<string, unknown> }> {
  const response = await t.request('GET', url, { token })
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  const etag = response.headers.etag
  expect(etag).toMatch(/^W\/"\d+\./)
  return { etag: String(etag), result: response.body.result }
}

function put(route: PutRoute, url: string, i: number, ifMatch: string) {
  return t.request('PUT', url, {
    token,
    headers: { 'if-match': ifMatch },
    body: { [route.field]: route.value(i) },
  })
}

describe('If-Match on every PUT', () => {
  it('is listed here for every PUT of the OpenAPI document whose resource has an ETag', async () => {
    const document = await t.request('GET', '/openapi.json')
    expect(document.status).toBe(200)
    const paths = document.body.paths as Record<
      string,
      Record<string, { responses: Record<string, unknown> }>
    >
    // A single-item GET (a path ending in an id) carries an ETag (http/etag.ts).
    const withEtag = Object.entries(paths)
      .filter(([path, operations]) => operations.put && operations.get && path.endsWith('}'))
      .map(([path]) => path)
      .sort()
    expect(withEtag.length).toBeGreaterThan(0)
    expect(ROUTES.map((route) => route.path).sort()).toEqual(withEtag)
    for (const path of withEtag) expect(paths[path]?.put?.responses).toHaveProperty('412')
  })

  it('cannot be forgotten: a PUT of a single resource that names no ifMatch table is not registered', async () => {
    const app = Fastify()
    registerEtags(app)
    expect(() => app.put('/things/:thingId', async () => ({}))).toThrow(
      /PUT \/things\/:thingId names no ifMatch/,
    )
    app.put('/things/:thingId/parts/:partId', { config: { ifMatch: 'webhooks' } }, async () => ({}))
    app.put('/things', async () => ({}))
    await app.close()
  })

  it('leaves no password-reset link behind when a PUT /v1/users/{id} with resetPassword is refused', async () => {
    const url = `/v1/users/${await createUser()}`
    const { etag } = await read(url)
    expect((await t.request('PUT', url, { token, body: { firstName: 'Moved' } })).status).toBe(200)
    const refused = await t.request('PUT', url, {
      token,
      headers: { 'if-match': etag },
      body: { resetPassword: true },
    })
    expect(refused.status).toBe(412)
    const after = (await read(url)).result
    expect(after.resetPasswordExpiryDate).toBeNull()
    expect(after.resetPasswordEmailStatus).toBeNull()
  })

  describe.each(ROUTES.map((route) => [route.path, route] as const))('PUT %s', (_path, route) => {
    it('of 20 concurrent PUTs with one If-Match, stores exactly one; the 19 others get 412', async () => {
      const url = await route.create()
      const { etag } = await read(url)
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => put(route, url, i, etag)))
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array(19).fill(412)])
      for (const answer of answers.filter((a) => a.status === 412)) {
        expect(answer.body.error.reason).toBe('precondition_failed')
        expect(answer.body.error.attribute).toHaveProperty('If-Match')
      }
      const winner = answers.find((answer) => answer.status === 200)!
      const after = await read(url)
      expect(after.result[route.field]).toBe(winner.body.result[route.field])
      expect(after.etag).not.toBe(etag)
    })

    it('refuses a stale or foreign If-Match with 412 and stores nothing', async () => {
      const url = await route.create()
      const first = await read(url)
      const accepted = await put(route, url, 0, first.etag)
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
      const current = await read(url)
      expect(current.result[route.field]).toBe(route.value(0))

      for (const ifMatch of [first.etag, 'W/"nonsense"']) {
        const stale = await put(route, url, 1, ifMatch)
        expect(stale.status, ifMatch).toBe(412)
        expect(stale.body.error.reason).toBe('precondition_failed')
      }
      // Nothing stored: the same representation, so the same ETag.
      const after = await read(url)
      expect(after.etag).toBe(current.etag)
      expect(after.result).toEqual(current.result)
    })

    it('takes If-Match: * as any version', async () => {
      const url = await route.create()
      const answer = await put(route, url, 1, '*')
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect((await read(url)).result[route.field]).toBe(route.value(1))
    })
  })
})
