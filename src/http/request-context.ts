import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance } from 'fastify'

/**
 * Who asked, for the records a request leaves behind (the audit trail's requestId and ip, API.md §13).
 * Carried by AsyncLocalStorage rather than through every service signature: it is metadata about the
 * request, not an input to any rule, and every write path would otherwise need two more parameters.
 */
export interface RequestContext {
  requestId: string
  ip: string
  /**
   * A PUT's If-Match, as the `updated` instant it names (etag.ts): the repository of a resource that
   * checks If-Match in its UPDATE adds `AND updated = <this>` to the statement.
   */
  ifMatchUpdated?: Date
}

const storage = new AsyncLocalStorage<RequestContext>()

/** The current request's id and address; undefined outside a request (workers, CLI, bootstrap). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore()
}

/** Runs the rest of every request — hooks, validation, handler — inside its context. */
export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    storage.run({ requestId: request.id, ip: request.ip }, done)
  })
}
