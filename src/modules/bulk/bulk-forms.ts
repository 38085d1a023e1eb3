import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify'
import type { TSchema } from 'typebox'
import type { ServiceContext } from '../../context.js'
import { connectionError } from '../../db/connection-errors.js'
import { AppError, invalidField } from '../../errors.js'
import {
  BulkAbortLine,
  BulkResponse,
  BulkResultLine,
  BulkSummaryLine,
  MAX_BULK_ITEMS,
} from './bulk.schemas.js'
import { BulkUserLoader } from './bulk-loader.js'
import { streamBulkLoad } from './bulk-stream.js'
import { withNullableScalars } from './serialization.js'

export const NDJSON = 'application/x-ndjson'

// Built once: Fastify caches a compiled serializer per schema object.
const SERIALIZED = {
  response: withNullableScalars(BulkResponse),
  resultLine: withNullableScalars(BulkResultLine),
  summaryLine: BulkSummaryLine,
  abortLine: BulkAbortLine,
}

/** The one route that takes an NDJSON body: the bulk form of creating platform users (docs/api.md#bulk-load-of-platform-users). */
const BULK_ROUTE = { method: 'POST', url: '/v1/users' } as const

/**
 * Registers the NDJSON body type under /v1. The body is handed over as the raw stream — never buffered,
 * and so not subject to the 1 MiB limit of JSON bodies (docs/api.md#conventions) — and only to the bulk route; any
 * other route answers 415 as for any other type that is not JSON.
 */
export function registerNdjsonBody(app: Pick<FastifyInstance, 'addContentTypeParser'>): void {
  app.addContentTypeParser(NDJSON, (request, payload, done) => {
    if (request.method !== BULK_ROUTE.method || request.routeOptions.url !== BULK_ROUTE.url) {
      return done(
        new AppError(
          'unsupported_media_type',
          'The request body must be JSON (Content-Type: application/json)',
        ),
        undefined,
      )
    }
    return done(null, payload)
  })
}

function isStream(body: unknown): body is Readable {
  return typeof (body as { pipe?: unknown } | undefined)?.pipe === 'function'
}

function dryRunOf(request: FastifyRequest): boolean {
  const value = (request.query as Record<string, unknown> | undefined)?.dryRun
  if (value === undefined || value === 'false' || value === '0') return false
  if (value === 'true' || value === '1' || value === '') return true
  throw invalidField('dryRun', 'must be true or false')
}

/**
 * The bulk forms of `POST /v1/users`, as a preValidation hook of that route: a JSON array or an NDJSON
 * stream is answered here; a single object passes on to the route's own validation and handler. The
 * hook runs before body validation because the route's schema describes one user: each bulk item is
 * validated on its own, against that same schema, by the loader.
 */
export function bulkUserForms(ctx: ServiceContext): preValidationAsyncHookHandler {
  return async function bulkUserFormsHook(request: FastifyRequest, reply: FastifyReply) {
    const body = request.body
    if (isStream(body)) return answerStream(ctx, request, reply, body)
    if (Array.isArray(body)) return answerArray(ctx, request, reply, body)
  }
}

async function answerArray(
  ctx: ServiceContext,
  request: FastifyRequest,
  reply: FastifyReply,
  items: unknown[],
) {
  const dryRun = dryRunOf(request)
  const loader = await BulkUserLoader.open(ctx, request.actor, { dryRun })
  if (items.length > MAX_BULK_ITEMS) {
    throw new AppError(
      'too_many_items',
      `A JSON array holds at most ${MAX_BULK_ITEMS} users (got ${items.length}); send more as NDJSON (Content-Type: ${NDJSON})`,
    )
  }
  const pending = []
  for (const [index, item] of items.entries()) pending.push(await loader.prepare(index, item))
  const outcomes = await loader.write(pending)
  const serialize = serializerFor(reply, SERIALIZED.response)
  const payload = { result: outcomes, summary: loader.summary() }
  return reply.code(200).type('application/json; charset=utf-8').send(serialize(payload))
}

async function answerStream(
  ctx: ServiceContext,
  request: FastifyRequest,
  reply: FastifyReply,
  body: Readable,
) {
  const dryRun = dryRunOf(request)
  const loader = await BulkUserLoader.open(ctx, request.actor, { dryRun })
  const result = serializerFor(reply, SERIALIZED.resultLine)
  const summary = serializerFor(reply, SERIALIZED.summaryLine)
  const abort = serializerFor(reply, SERIALIZED.abortLine)

  async function* answer() {
    try {
      yield* streamBulkLoad(body, loader, { result, summary })
    } catch (error) {
      // The 200 and the rows answered so far are on their way: the last line says why the rest is not.
      // A client that finds no summary line knows the load stopped. When the database went away, the
      // line says so (503 database_unavailable): re-sending the load once it is back is safe, the rows
      // already written answering email_taken.
      const unavailable = connectionError(error)
      if (unavailable) request.log.warn({ err: error }, 'bulk load stopped: the database is unreachable')
      else request.log.error({ err: error }, 'bulk load stopped')
      const known = unavailable ?? (error instanceof AppError && error.statusCode < 500 ? error : undefined)
      const line = {
        error: {
          code: known?.statusCode ?? 500,
          reason: known?.reason ?? 'internal',
          message: known?.message ?? 'The load stopped on an internal error; rows answered above stand',
          requestId: request.id,
        },
      }
      yield `${abort(line)}\n`
    }
  }
  return reply
    .code(200)
    .type(`${NDJSON}; charset=utf-8`)
    .send(Readable.from(answer(), { highWaterMark: 1 }))
}

/**
 * The response schema's serializer (compiled once per route and cached by Fastify): an allow-list, so
 * only the fields the schema names reach the client, as for every other response.
 */
function serializerFor(reply: FastifyReply, schema: TSchema): (data: unknown) => string {
  return reply.compileSerializationSchema(schema as unknown as Record<string, unknown>) as (
    data: unknown,
  ) => string
}
