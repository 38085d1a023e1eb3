import { hash as digest } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { VersionedTable } from '../db/row-version.js'
import { AppError } from '../errors.js'
import { currentRequest } from './request-context.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * On a PUT of a single resource: the table of the row it writes, whose `updated` its If-Match is
     * checked against in the UPDATE itself (the table's repository reads it with `ifMatchUpdated`).
     */
    ifMatch?: VersionedTable
  }
}

/**
 * Optimistic concurrency (docs/api.md#safe-retries). Single-item GETs (a route ending in an id parameter) carry an
 * ETag and honour If-None-Match with 304. The ETag names the representation's `updated` instant and a
 * hash of it: `W/"<updated ms>.<hash>"`.
 *
 * Every PUT of a single resource declares in its route config (`ifMatch`) the table of the row it writes;
 * registering one without it fails. Its If-Match is checked in the UPDATE itself: the instant goes into
 * the request context and the repository writes `… WHERE id = $1 AND updated = $2` (every write moves
 * `updated` on by at least 1 ms, db/row-version.ts), so of concurrent PUTs with one If-Match exactly one
 * wins and the rest get 412 — no read before the write, no window between them. `If-Match: *` asks for no
 * particular version; a value that is not one of our ETags matches nothing (412).
 */
const SINGLE_ITEM = /\/:[A-Za-z]+$/
const UPDATED = /"updated":"(\d{4}-\d\d-\d\dT[\d:.]+Z)"/

export function etagOf(payload: string): string {
  const hash = digest('sha256', payload, 'base64url').slice(0, 27)
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
  // Callback-style hooks: they do no I/O, and an async hook costs every request a promise.
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    if (request.method !== 'GET' || reply.statusCode !== 200 || typeof payload !== 'string')
      return done(null, payload)
    if (!SINGLE_ITEM.test(request.routeOptions.url ?? '')) return done(null, payload)
    const etag = etagOf(payload)
    reply.header('etag', etag)
    const ifNoneMatch = request.headers['if-none-match']
    if (typeof ifNoneMatch === 'string' && matches(ifNoneMatch, etag)) {
      reply.code(304)
      return done(null, '')
    }
    done(null, payload)
  })

  app.addHook('onRoute', (route) => {
    const methods = ([] as string[]).concat(route.method)
    if (methods.includes('PUT') && SINGLE_ITEM.test(route.url) && !route.config?.ifMatch) {
      throw new Error(`PUT ${route.url} names no ifMatch table in its route config (http/etag.ts)`)
    }
  })

  app.addHook('preHandler', (request: FastifyRequest, _reply, done) => {
    const ifMatch = request.headers['if-match']
    const table = request.routeOptions.config.ifMatch
    if (request.method !== 'PUT' || typeof ifMatch !== 'string' || !table) return done()
    const updated = ifMatchInstant(ifMatch)
    const context = currentRequest()
    if (context && updated) context.ifMatch = { table, updated }
    done()
  })
}
