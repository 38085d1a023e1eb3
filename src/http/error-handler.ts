import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { connectionError } from '../db/connection-errors.js'
import { AppError, type ErrorReason, errorBody } from '../errors.js'
import { drainRequestBody } from './drain.js'
import { collectRouteMethods } from './protocol-edges.js'

/** Fastify's own failures (body parsing, limits), mapped into the closed list of reasons. */
const FASTIFY_CODES: Record<string, { reason: ErrorReason; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    reason: 'unsupported_media_type',
    message: 'The request body must be JSON (Content-Type: application/json)',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    reason: 'payload_too_large',
    message: 'The request body is larger than 1 MiB',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { reason: 'invalid_json', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { reason: 'invalid_json', message: 'The request body is empty' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    reason: 'validation_failed',
    message: 'Content-Length does not match the body',
  },
}

function toAppError(error: FastifyError | Error): AppError | undefined {
  if (error instanceof AppError) return error
  const mapped = connectionError(error)
  if (mapped) return mapped
  const code = (error as FastifyError).code
  const known = code ? FASTIFY_CODES[code] : undefined
  if (known) return new AppError(known.reason, known.message)
  // JSON.parse errors raised by the body parser carry a 400.
  if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) {
    return new AppError('invalid_json', 'The request body is not valid JSON')
  }
  return undefined
}

/**
 * Every failure answers in the error envelope; a 5xx never shows its internal message. A path that
 * exists, asked with a method it does not answer, is 405 with `Allow`; a request no route takes is answered
 * before its body is read (docs/api.md, Conventions). Register before any route.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // An oversized body: read the rest (bounded) before answering, so the client reads the 413.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') await drainRequestBody(request.raw)
    const known = toAppError(error)
    if (known) {
      if (known.reason === 'database_unavailable') request.log.warn({ err: error }, 'database unavailable')
      else if (known.statusCode >= 500) request.log.error({ err: error }, 'request failed')
      if (known.headers) reply.headers(known.headers)
      return reply.code(known.statusCode).send(errorBody(known, request.id))
    }
    const status = error.statusCode
    if (status !== undefined && status >= 400 && status < 500) {
      // A client error Fastify raised that we have not named: keep its status, use the nearest reason.
      const reason: ErrorReason =
        status === 404 ? 'not_found' : status === 413 ? 'payload_too_large' : 'validation_failed'
      return reply.code(status).send(errorBody(new AppError(reason, error.message), request.id))
    }
    request.log.error({ err: error }, 'request failed')
    const internal = new AppError(
      'internal',
      'An internal error occurred; quote the request id when reporting it',
    )
    return reply.code(500).send(errorBody(internal, request.id))
  })

  const methodsOf = collectRouteMethods(app)
  // A request no route takes gets its 404 or 405 before Fastify reads the body: otherwise a QUERY
  // without Content-Type (which Fastify refuses while parsing, RFC 10008) or a body of a type nobody
  // parses would be answered 400 or 415 for a body that no route would ever read. preParsing runs after
  // every onRequest hook (request id, CORS), and calls the not-found handler of the request's own scope
  // (SCIM has its own). Not calling `done` ends the request's way through the hooks there.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!request.is404) return done(null, payload)
    const answered: unknown = request.routeOptions.handler.call(request.server, request, reply)
    if (answered instanceof Promise) answered.catch((error: Error) => reply.send(error))
  })
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? ''
    const allowed = methodsOf(path)
    if (allowed.length > 0) {
      const wrongMethod = new AppError(
        'method_not_allowed',
        `${request.method} is not allowed on ${path}; it answers ${allowed.join(', ')}`,
      )
      return reply.code(405).header('allow', allowed.join(', ')).send(errorBody(wrongMethod, request.id))
    }
    const notFound = new AppError(
      'not_found',
      `Route ${request.method} ${request.url.split('?')[0]} not found`,
    )
    return reply.code(404).send(errorBody(notFound, request.id))
  })
}
