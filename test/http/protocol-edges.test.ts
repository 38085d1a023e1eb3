import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * The protocol's edges answer in the error envelope (issue 29 item 6): a request line over Node's header
 * limit (431) and a wrong method on a path that exists (405 with Allow).
 */
let t: TestApp
let port: number

beforeAll(async () => {
  t = await createTestApp()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const address = t.app.server.address()
  port = typeof address === 'object' && address ? address.port : 0
})
afterAll(async () => {
  await t.close()
})

/** Sends raw bytes and reads everything the server answers until it closes the connection. */
function rawExchange(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.on('error', (error) => (answer ? resolve(answer) : reject(error)))
    socket.on('close', () => resolve(answer))
    socket.write(request)
  })
}

function parse(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n')
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const colon = line.indexOf(':')
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
    }),
  )
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) }
}

describe('a request the HTTP parser refuses', () => {
  it('answers a request line over 16 KiB with 431 in the envelope and an X-Request-Id', async () => {
    const answer = parse(
      await rawExchange(`GET /v1/regions?q=${'a'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    )
    expect(answer.status).toBe(431)
    expect(answer.headers['content-type']).toContain('application/json')
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.body).toEqual({
      error: {
        code: 431,
        reason: 'headers_too_large',
        message: expect.any(String),
        requestId: answer.headers['x-request-id'],
      },
    })
  })

  it('answers headers over the limit the same way', async () => {
    const answer = parse(
      await rawExchange(`GET /v1/regions HTTP/1.1\r\nHost: x\r\nX-Filler: ${'b'.repeat(20 * 1024)}\r\n\r\n`),
    )
    expect(answer.status).toBe(431)
    expect(answer.body.error.reason).toBe('headers_too_large')
  })

  it('answers a malformed request with 400 in the envelope', async () => {
    const answer = parse(await rawExchange('NOT HTTP AT ALL\r\n\r\n'))
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: 400, reason: 'validation_failed' })
    expect(answer.headers['x-request-id']).toBeDefined()
  })
})

describe('a wrong method on a path that exists', () => {
  it('is 405 method_not_allowed with Allow listing the path’s methods', async () => {
    const token = await t.adminToken()
    const regions = await t.request('PATCH', '/v1/regions', { token, body: {} })
    expect(regions.status).toBe(405)
    expect(regions.headers.allow).toBe('GET, HEAD')
    expect(regions.headers['x-request-id']).toBeDefined()
    expect(regions.body.error).toMatchObject({ code: 405, reason: 'method_not_allowed' })

    // With path parameters, and without credentials: the method is wrong whoever asks.
    const user = await t.request('POST', '/v1/users/0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f')
    expect(user.status).toBe(405)
    expect(user.headers.allow).toBe('DELETE, GET, HEAD, PUT')

    const tenants = await t.request('DELETE', '/v1/tenants/')
    expect(tenants.status).toBe(405)
    expect(tenants.headers.allow).toBe('GET, HEAD, POST')
  })

  it('keeps 404 not_found for a path that does not exist', async () => {
    const missing = await t.request('PATCH', '/v1/no-such-thing')
    expect(missing.status).toBe(404)
    expect(missing.body.error.reason).toBe('not_found')
    expect(missing.headers.allow).toBeUndefined()
  })
})

describe('a method no route declares (issue 37 item 8)', () => {
  const SOME_ID = '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f'
  /** Every documented path, parameters filled in, with the methods the document gives it. */
  function documentedPaths(): { path: string; methods: string[] }[] {
    const { paths } = t.app.swagger() as { paths: Record<string, Record<string, unknown>> }
    return Object.entries(paths).map(([template, operations]) => ({
      path: template.replace(/\{[^}]+\}/g, SOME_ID),
      methods: Object.keys(operations).map((method) => method.toUpperCase()),
    }))
  }

  it('is 405 in the envelope with Allow on every documented path: QUERY with or without a body, PROPFIND, SEARCH', async () => {
    const asked = [
      { method: 'QUERY' },
      { method: 'QUERY', headers: { 'content-type': 'application/json' }, payload: '{"q":"x"}' },
      { method: 'QUERY', headers: { 'content-type': 'text/plain' }, payload: 'not json' },
      { method: 'PROPFIND' },
      { method: 'SEARCH', headers: { 'content-type': 'application/json' }, payload: '{' },
    ]
    const paths = documentedPaths()
    expect(paths.length).toBeGreaterThan(20)
    for (const { path, methods } of paths) {
      for (const request of asked) {
        const answer = await t.app.inject({ ...request, method: request.method as 'GET', url: path })
        const where = `${request.method} ${path} ${request.headers?.['content-type'] ?? ''}`
        expect(answer.statusCode, where).toBe(405)
        const allowed = String(answer.headers.allow).split(', ')
        expect(allowed, where).toEqual(expect.arrayContaining(methods))
        expect(allowed, where).not.toContain(request.method)
        const requestId = answer.headers['x-request-id']
        expect(answer.json(), where).toEqual({
          error: { code: 405, reason: 'method_not_allowed', message: expect.any(String), requestId },
        })
      }
    }
  })

  it('is 404 not_found on a path that does not exist, whatever the body', async () => {
    for (const headers of [{}, { 'content-type': 'application/json' }]) {
      const answer = await t.app.inject({ method: 'QUERY' as 'GET', url: '/v1/no-such-thing', headers })
      expect(answer.statusCode).toBe(404)
      expect(answer.json().error).toMatchObject({ code: 404, reason: 'not_found' })
      expect(answer.headers.allow).toBeUndefined()
    }
  })

  it('answers a QUERY with a body on a kept-alive connection, and the next request on it too', async () => {
    const body = JSON.stringify({ filter: 'x'.repeat(10_000) })
    const answers = await rawExchange(
      `QUERY /v1/regions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    )
    const statuses = [...answers.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))
    expect(statuses).toEqual([405, 200])
    expect(answers).toContain('"reason":"method_not_allowed"')
  })
})
