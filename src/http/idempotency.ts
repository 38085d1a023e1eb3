import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { Database } from '../db/schema.js'
import { AppError } from '../errors.js'
import { type Claim, IN_PROGRESS, openResponse, type SecretKeys, sealResponse } from './idempotency-seal.js'

/**
 * Safe retries (docs/api.md#safe-retries). A POST with `Idempotency-Key` claims (caller, key) with a row before it runs;
 * the response is stored beside it. Within 24 h the same caller, key and body replays the stored response
 * with `Idempotent-Replayed: true` (a replayed 201 answers 200, docs/api.md#conventions); another body → 409
 * idempotency_key_reused. A retry that arrives while the first is still running gets 409 too, rather
 * than running twice. Server errors release the key so that a retry can run again.
 *
 * A stored response may carry a secret shown once (an API key's, a webhook's signing secret, a SCIM
 * token), so it is kept sealed (AES-256-GCM, crypto/secrets.ts) under the caller, key and request it
 * answers: a database reader finds no secret, and a sealed answer moved to another row does not open.
 */
const WINDOW_MS = 24 * 3600 * 1000
/**
 * A claim still in progress after this long belongs to a request that can no longer finish it (its
 * process died, or the database went away before the answer could be stored): a retry takes it over.
 */
const STALE_CLAIM_MS = 5 * 60 * 1000
const MAX_KEY_LENGTH = 255
const STORED_HEADERS = ['location', 'content-type']

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim: Claim | undefined
  }
}

export function registerIdempotency(
  app: FastifyInstance,
  db: Kysely<Database>,
  clock: Clock,
  keys: SecretKeys,
): void {
  app.decorateRequest('idempotencyClaim', undefined)

  app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key']
    if (request.method !== 'POST' || header === undefined || !request.actor) return
    const key = Array.isArray(header) ? header[0]! : header
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new AppError('validation_failed', `Idempotency-Key must be 1–${MAX_KEY_LENGTH} characters`, {
        'Idempotency-Key': `must be 1–${MAX_KEY_LENGTH} characters`,
      })
    }
    // A streamed body (NDJSON bulk) cannot be fingerprinted before it runs: not replayable.
    if (request.body !== undefined && typeof (request.body as { pipe?: unknown }).pipe === 'function') return

    const actor = request.actor.principalId
    const requestHash = fingerprint(request)
    const now = clock.now()
    const claimed = await db
      .insertInto('idempotency_keys')
      .values({
        actor,
        key,
        request_hash: requestHash,
        status_code: IN_PROGRESS,
        response_headers: '{}',
        response_body: '',
        created: now,
      })
      .onConflict((oc) =>
        // An expired record, or an abandoned claim, is taken over as if it were not there.
        oc
          .columns(['actor', 'key'])
          .doUpdateSet({
            request_hash: requestHash,
            status_code: IN_PROGRESS,
            response_headers: '{}',
            response_body: '',
            created: now,
          })
          .where((eb) =>
            eb.or([
              eb('idempotency_keys.created', '<', new Date(now.getTime() - WINDOW_MS)),
              eb.and([
                eb('idempotency_keys.status_code', '=', IN_PROGRESS),
                eb('idempotency_keys.created', '<', new Date(now.getTime() - STALE_CLAIM_MS)),
              ]),
            ]),
          ),
      )
      .returning('key')
      .executeTakeFirst()
    if (claimed) {
      request.idempotencyClaim = { actor, key, requestHash }
      return
    }

    const stored = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('actor', '=', actor)
      .where('key', '=', key)
      .executeTakeFirst()
    if (!stored || stored.request_hash !== requestHash) {
      throw new AppError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with another request',
        {
          'Idempotency-Key': 'already used with another request',
        },
      )
    }
    if (stored.status_code === IN_PROGRESS) {
      throw new AppError(
        'idempotency_key_reused',
        'A request with this Idempotency-Key is still running; retry shortly',
        {
          'Idempotency-Key': 'in progress',
        },
      )
    }
    const body = openResponse(keys, stored)
    if (body === undefined) {
      throw new AppError(
        'idempotency_key_reused',
        'The response stored for this Idempotency-Key cannot be replayed; use a new key',
        { 'Idempotency-Key': 'its stored response cannot be replayed' },
      )
    }
    reply
      .code(stored.status_code === 201 ? 200 : stored.status_code)
      .headers(stored.response_headers)
      .header('idempotent-replayed', 'true')
    return reply.send(body)
  })

  // Callback style: most requests carry no key, and an async hook costs every request a promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.idempotencyClaim) return done(null, payload)
    storeResponse(request, reply, payload).then(
      (stored) => done(null, stored),
      (error: Error) => done(error),
    )
  })

  async function storeResponse(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const claim = request.idempotencyClaim as Claim
    request.idempotencyClaim = undefined
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      await release(db, claim, request)
      return payload
    }
    const headers: Record<string, string> = {}
    for (const name of STORED_HEADERS) {
      const value = reply.getHeader(name)
      if (typeof value === 'string') headers[name] = value
    }
    try {
      await db
        .updateTable('idempotency_keys')
        .set({
          status_code: reply.statusCode,
          response_headers: JSON.stringify(headers),
          response_body: sealResponse(keys, claim, payload),
        })
        .where('actor', '=', claim.actor)
        .where('key', '=', claim.key)
        .execute()
    } catch (error) {
      // The work is done and its answer goes out; only the replay is lost (the claim goes stale).
      request.log.warn({ err: error }, 'idempotency: could not store the response for replay')
    }
    return payload
  }

  // A request that failed before a response was sent (aborted connection) must not hold its key.
  app.addHook('onResponse', (request, _reply, done) => {
    if (!request.idempotencyClaim) return done()
    // release logs its own failure and never rejects; the handler is there for the linter's sake.
    release(db, request.idempotencyClaim, request).then(
      () => done(),
      () => done(),
    )
  })
}

async function release(db: Kysely<Database>, claim: Claim, request: FastifyRequest): Promise<void> {
  try {
    await db
      .deleteFrom('idempotency_keys')
      .where('actor', '=', claim.actor)
      .where('key', '=', claim.key)
      .where('status_code', '=', IN_PROGRESS)
      .execute()
  } catch (error) {
    // The database is gone (the usual reason for the 5xx being answered): the claim goes stale and a
    // retry after STALE_CLAIM_MS takes it over.
    request.log.warn({ err: error }, 'idempotency: could not release a claim')
  }
}

function fingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(request.method)
    .update('\u0000')
    .update(request.url)
    .update('\u0000')
    .update(JSON.stringify(request.body ?? null))
    .digest('base64url')
}

/** Deletes records past the 24-hour window; run periodically by the background work. */
export async function sweepIdempotencyKeys(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created', '<', new Date(now.getTime() - WINDOW_MS))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
