import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import { currentRequest } from './request-context.js'

/**
 * Optimistic concurrency (API.md §8). Single-item GETs (a route ending in an id parameter) carry an
 * ETag and honour If-None-Match with 304. The ETag names the representation's `updated` instant and a
 * hash of it: `W/"<updated ms>.<hash>"`.
 *
 * A PUT with If-Match on a route in ATOMIC_ROUTES is checked in the UPDATE itself: the instant is put in
 * the request context and the repository writes `… WHERE id = $1 AND updated = $2` (updated moves on
 * by at least 1 ms per write), so of concurrent PUTs with one If-Match exactly one wins and the rest get
 * 412. Other PUTs are still checked in two steps — the current representation read through the GET
 * route with the caller's credentials, then the write — where a write landing between them is not seen.
 */
const SINGLE_ITEM = /\/:[A-Za-z]+$/
const ATOMIC_ROUTES = new Set(['/v1/tenants/:tenantId', '/v1/users/:userId'])
const UPDATED = /"updated":"(\d{4}-\d\d-\d\dT[\d:.]+Z)"/

export function etagOf(payload: string): string {
  const hash = createHash('sha256').update(payload).digest('base64url').slice(0, 27)
  const updated = UPDATED.exec(payload)?.[1]
  const instant = updated ? Date.parse(updated) : Number.NaN
  return Number.isNaN(instant) ? `W/"${hash}"` : `W/"${instant}.${hash}"`
}

export function preconditionFailed(): AppError {
  return new AppError(
    'precondition_failed',
    'The resource changed since it was read (If-Match does not match)',
    {
      'If-Match': 'does not match the current ETag',
    },
  )
}

/** The `updated` instant an If-Match names; undefined for `*` (any version); 412 for a foreign value. */
function ifMatchInstant(header: string): Date | undefined {
  const values = header.split(',').map((value) => value.trim())
  if (values.includes('*')) return undefined
  for (const value of values) {
    const match = /^(?:W\/)?"(\d{1,15})\.[A-Za-z0-9_-]+"$/.exec(value)
    if (match) return new Date(Number(match[1]))
  }
  throw preconditionFailed()
}

function matches(header: string, etag: string): boolean {
  return header
    .split(',')
    .map((value) => value.trim())
    .some((value) => value === '*' || value === etag || `W/${value}` === etag)
}

export function registerEtags(app: FastifyInstance): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    if (request.method !== 'GET' || reply.statusCode !== 200 || typeof payload !== 'string') return payload
    if (!SINGLE_ITEM.test(request.routeOptions.url ?? '')) return payload
    const etag = etagOf(payload)
    reply.header('etag', etag)
    const ifNoneMatch = request.headers['if-none-match']
    if (typeof ifNoneMatch === 'string' && matches(ifNoneMatch, etag)) {
      reply.code(304)
      return ''
    }
    return payload
  })

  app.addHook('preHandler', async (request: FastifyRequest) => {
    const ifMatch = request.headers['if-match']
    if (request.method !== 'PUT' || typeof ifMatch !== 'string') return
    if (ATOMIC_ROUTES.has(request.routeOptions.url ?? '')) {
      const context = currentRequest()
      const instant = ifMatchInstant(ifMatch)
      if (context && instant) context.ifMatchUpdated = instant
      return
    }
    const current = await request.server.inject({
      method: 'GET',
      url: request.url,
      headers: request.headers.authorization ? { authorization: request.headers.authorization } : {},
    })
    // Not readable: let the PUT itself answer (404, 403…).
    if (current.statusCode !== 200) return
    const etag = current.headers.etag
    if (typeof etag === 'string' && !matches(ifMatch, etag)) throw preconditionFailed()
  })
}
