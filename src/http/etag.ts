import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'

/**
 * Optimistic concurrency (API.md §8). Single-item GETs (a route ending in an id parameter) carry an
 * ETag — a hash of the representation — and honour If-None-Match with 304. A PUT with If-Match is checked
 * against the current representation, read through the same GET route with the caller's own
 * credentials (so the check sees exactly what the caller would), and refused with 412 when it no longer
 * matches. The check and the write are two steps: a write landing between them is not detected; the
 * window is one request long.
 */
const SINGLE_ITEM = /\/:[A-Za-z]+$/

export function etagOf(payload: string): string {
  return `W/"${createHash('sha256').update(payload).digest('base64url').slice(0, 27)}"`
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
    const current = await request.server.inject({
      method: 'GET',
      url: request.url,
      headers: request.headers.authorization ? { authorization: request.headers.authorization } : {},
    })
    // Not readable: let the PUT itself answer (404, 403…).
    if (current.statusCode !== 200) return
    const etag = current.headers.etag
    if (typeof etag === 'string' && !matches(ifMatch, etag)) {
      throw new AppError(
        'precondition_failed',
        'The resource changed since it was read (If-Match does not match)',
        {
          'If-Match': 'does not match the current ETag',
        },
      )
    }
  })
}
