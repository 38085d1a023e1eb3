import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { AppError, type ErrorReason, errorBody } from '../errors.js'

/**
 * The protocol's edges in the error envelope (docs/api.md#conventions), like every other failure.
 *
 * A request Node's HTTP parser refuses never reaches Fastify's routing: a request line or headers over
 * the limit (16 KiB, 431), a malformed request (400), one too slow to arrive (408). Fastify hands those
 * to its `clientErrorHandler`, which answers here — with the envelope and an `X-Request-Id` — before
 * closing the connection (the parser cannot read the next request on it).
 */
const PARSER_REFUSALS: Record<string, { reason: ErrorReason; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    reason: 'headers_too_large',
    message: 'The request line and headers are larger than the server accepts (16 KiB)',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { reason: 'request_timeout', message: 'The request took too long to arrive' },
}
const MALFORMED = { reason: 'validation_failed', message: 'The request is not well-formed HTTP' } as const

export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A reset or closed connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const refusal = PARSER_REFUSALS[error.code ?? ''] ?? MALFORMED
  const requestId = randomUUID()
  const failure = new AppError(refusal.reason, refusal.message)
  const body = JSON.stringify(errorBody(failure, requestId))
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${failure.statusCode} ${STATUS_CODES[failure.statusCode]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}

/**
 * The methods each path answers, collected as routes are added (`onRoute`), so that a known path asked
 * with another method is a 405 `method_not_allowed` naming them in `Allow` (RFC 9110 §15.5.6) rather than
 * a 404. Register before any route.
 */
export function collectRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: { pattern: RegExp; methods: Set<string> }[] = []
  const byUrl = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    // A catch-all (CORS preflight's OPTIONS *) says nothing about which paths exist.
    if (route.url === '*' || route.url === '/*') return
    let methods = byUrl.get(route.url)
    if (!methods) {
      methods = new Set()
      byUrl.set(route.url, methods)
      routes.push({ pattern: routePattern(route.url), methods })
    }
    for (const method of [route.method].flat()) methods.add(method.toUpperCase())
  })
  return (path) => {
    const allowed = new Set<string>()
    for (const route of routes) {
      if (route.pattern.test(path)) for (const method of route.methods) allowed.add(method)
    }
    return [...allowed].sort()
  }
}

/** A route URL (`/v1/tenants/:tenantId`, `/docs/*`) as a pattern over request paths. */
function routePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment === '*'
        ? '.*'
        : segment.startsWith(':')
          ? '[^/]+'
          : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/')
  // The router ignores a trailing slash (app.ts routerOptions).
  return new RegExp(`^${source.replace(/\/$/, '')}/?$`)
}
