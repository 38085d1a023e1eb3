import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { PERMISSIONS } from '../../src/access/permissions.js'
import { ERROR_REASONS } from '../../src/errors.js'
import { useTestApp } from '../helpers/test-app.js'
import { TEST_ADMIN } from '../helpers/test-env.js'

/**
 * The published OpenAPI document (docs/api.md): what every operation must declare — so that a teammate's
 * new route without it fails here — and that the document tells the truth about credentials and failures,
 * checked by calling every operation.
 */
const t = useTestApp()
let doc: any
let token: string

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

interface Operation {
  path: string
  method: string
  op: any
}

function operations(): Operation[] {
  return Object.entries(doc.paths as Record<string, any>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, op: item[method] })),
  )
}

const name = ({ method, path }: Operation) => `${method.toUpperCase()} ${path}`

/** A concrete URL: each path parameter filled from `given`, its schema's example, or a random UUID. */
function urlOf({ path, op }: Operation, given: Record<string, string> = {}): string {
  return path.replace(/\{([^}]+)\}/g, (_match, param: string) => {
    if (given[param]) return given[param]
    const schema = op.parameters?.find((p: any) => p.in === 'path' && p.name === param)?.schema
    return encodeURIComponent(schema?.examples?.[0] ?? schema?.example ?? randomUUID())
  })
}

/** The operation's JSON body example, with every address in it moved to a closed loopback port. */
function jsonExample(op: any): unknown {
  const media = op.requestBody?.content?.['application/json']
  if (!media) return undefined
  const first = Object.values(media.examples ?? {})[0] as { value?: unknown } | undefined
  const example = media.example ?? first?.value ?? media.schema?.examples?.[0]
  if (example === undefined) return undefined
  // Tests talk to loopback only: an identity provider's issuer or a webhook's URL must not leave the host.
  return JSON.parse(JSON.stringify(example).replace(/https?:\/\/[^/"]+/g, 'https://127.0.0.1:9'))
}

/** The reasons the operation documents for a status (none: an empty list). */
function documentedReasons(op: any, status: number): string[] {
  return (
    op.responses?.[String(status)]?.content?.['application/json']?.schema?.properties?.error?.properties
      ?.reason?.enum ?? []
  )
}

beforeAll(async () => {
  doc = (await t.request('GET', '/openapi.json')).body
  token = await t.adminToken()
})

describe('every operation declares itself', () => {
  it('has a unique camelCase operationId, a summary, a description and tags', () => {
    const ids = new Set<string>()
    for (const operation of operations()) {
      const { op } = operation
      expect(op.operationId, name(operation)).toMatch(/^[a-z][a-zA-Z0-9]+$/)
      expect(ids.has(op.operationId), `${name(operation)}: operationId ${op.operationId} is taken`).toBe(
        false,
      )
      ids.add(op.operationId)
      expect(op.summary, name(operation)).toEqual(expect.any(String))
      expect(op.description, name(operation)).toEqual(expect.any(String))
      expect(op.tags?.length, name(operation)).toBeGreaterThan(0)
    }
    expect(ids.size).toBeGreaterThanOrEqual(34)
  })

  it('says in its description which permission it needs, or that none is needed', () => {
    const permission = new RegExp(
      `\\b(${PERMISSIONS.join('|')})\\b|no permission needed|any authenticated`,
      'i',
    )
    for (const operation of operations()) {
      const { op } = operation
      if (op.security.length === 0) expect(op.description, name(operation)).toMatch(/no credentials/i)
      else expect(op.description, name(operation)).toMatch(permission)
    }
  })

  it('gives every request body a realistic example', () => {
    for (const operation of operations()) {
      const { op } = operation
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
        const example = media.example ?? media.examples ?? media.schema?.examples
        expect(example, `${name(operation)} ${type}`).toBeDefined()
      }
    }
  })

  it('lists the reasons it answers, each under its own status', () => {
    for (const operation of operations()) {
      const { op } = operation
      expect(op['x-error-reasons'], name(operation)).toContain('internal')
      for (const reason of op['x-error-reasons'] as (keyof typeof ERROR_REASONS)[]) {
        expect(documentedReasons(op, ERROR_REASONS[reason]), `${name(operation)} ${reason}`).toContain(reason)
      }
    }
  })
})

describe('the document is clean for generators and linters', () => {
  it('publishes no validator-only keyword, while validation still explains each field', async () => {
    expect(JSON.stringify(doc)).not.toContain('errorMessage')
    // Publishing strips a copy: the schemas the validator compiled keep their messages.
    const response = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: '   ', regionId: 'not-a-uuid' },
    })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toEqual({
      name: 'must be 1–255 characters, at least one of them visible (not only spaces or invisible characters), without control characters',
      regionId: 'must be a UUID',
    })
  })

  it('names the server, and declares Bearer and Basic as separate http schemes', () => {
    expect(doc.servers).toEqual([{ url: t.config.publicUrl, description: expect.any(String) }])
    const schemes = doc.components.securitySchemes
    expect(schemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    expect(schemes.basicAuth).toMatchObject({ type: 'http', scheme: 'basic' })
    for (const operation of operations()) {
      const names = operation.op.security.flatMap((requirement: object) => Object.keys(requirement))
      if (names.length > 0)
        expect(names, name(operation)).toEqual(expect.arrayContaining(['bearerAuth', 'basicAuth']))
    }
  })
})

describe('the document tells the truth', () => {
  it('asks for credentials exactly where the server does', async () => {
    for (const operation of operations()) {
      const body = jsonExample(operation.op)
      const response = await t.request(operation.method, urlOf(operation), { body: body ?? undefined })
      const demanded = response.status === 401 && response.body.error.reason === 'unauthorized'
      // POST /v1/tokens answers 401 to wrong credentials in its body: it documents that reason itself.
      if (operation.op.security.length === 0 && demanded) {
        expect(documentedReasons(operation.op, 401), name(operation)).toContain('unauthorized')
      } else {
        expect(demanded, name(operation)).toBe(operation.op.security.length > 0)
      }
    }
  })

  it('accepts the token as Bearer and the password as Basic, as its schemes say', async () => {
    const basic = `Basic ${Buffer.from(`${TEST_ADMIN.email}:${TEST_ADMIN.password}`).toString('base64')}`
    expect((await t.request('GET', '/v1/regions', { authorization: `Bearer ${token}` })).status).toBe(200)
    expect((await t.request('GET', '/v1/regions', { authorization: basic })).status).toBe(200)
    // The token is not a Basic credential: a client that mixed the schemes up is refused.
    expect((await t.request('GET', '/v1/regions', { authorization: `Basic ${token}` })).status).toBe(401)
  })

  it('documents every failure an operation answers to its own example request', async () => {
    // Once with made-up ids, once inside a tenant that exists (so the probe gets past the tenant).
    const created = await t.request('POST', '/v1/tenants', {
      token,
      body: { ...(jsonExample(doc.paths['/v1/tenants'].post) as object), name: 'Probe' },
    })
    expect(created.status).toBe(201)
    const admin = (await t.request('POST', '/v1/login', { token })).body.result
    const inTenant: Record<string, string> = { tenantId: created.body.result.id, userId: admin.userId }
    for (const given of [{}, inTenant]) {
      for (const operation of operations()) {
        const url = urlOf(operation, given)
        const response = await t.request(operation.method, url, { token, body: jsonExample(operation.op) })
        expect(response.status, `${name(operation)} ${url}`).toBeLessThan(500)
        if (response.status < 400) continue
        const reason = response.body.error.reason
        const documented = documentedReasons(operation.op, response.status)
        expect(documented, `${name(operation)} ${url}: ${reason}`).toContain(reason)
      }
    }
  })

  it('documents validation_failed wherever a path parameter is checked', async () => {
    for (const operation of operations()) {
      const uuidParams = (operation.op.parameters ?? []).filter(
        (p: any) => p.in === 'path' && p.schema?.pattern?.includes('[0-9a-fA-F]{8}'),
      )
      if (uuidParams.length === 0) continue
      const url = operation.path.replace(/\{[^}]+\}/g, 'not-a-uuid')
      const response = await t.request(operation.method, url, { token, body: jsonExample(operation.op) })
      expect(response.status, name(operation)).toBe(400)
      expect(documentedReasons(operation.op, 400), name(operation)).toContain(response.body.error.reason)
    }
  })
})

describe('a client generated from the document (examples/client.ts)', () => {
  it('logs in, creates a tenant and lists users against a running server', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const address = t.app.server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    // Imported by path: its generated types exist only after `npm run check:client`, and are types only.
    const example = pathToFileURL(resolve(import.meta.dirname, '../../examples/client.ts')).href
    const { runExample } = await import(example)
    const outcome = await runExample(`http://127.0.0.1:${port}`, TEST_ADMIN.email, TEST_ADMIN.password)
    expect(outcome.tenant.name).toMatch(/^Example tenant/)
    expect(outcome.userEmails).toContain(TEST_ADMIN.email)
  })
})
