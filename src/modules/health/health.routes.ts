import { Type } from 'typebox'
import { databaseUnavailable } from '../../db/connection-errors.js'
import type { RouteModule } from '../../http/typed-app.js'
import { pingDatabase } from './health.repository.js'

const Status = Type.Object({ status: Type.String() })

/**
 * Liveness (the process answers; it never touches the database) and readiness (the database answers: 503
 * database_unavailable with Retry-After when it does not). No credentials.
 */
export const healthRoutes: RouteModule = async (app, ctx) => {
  app.get('/healthz', { schema: { tags: ['health'], response: { 200: Status } } }, async () => ({
    status: 'ok',
  }))
  app.get('/readyz', { schema: { tags: ['health'], response: { 200: Status } } }, async () => {
    try {
      await pingDatabase(ctx.db)
    } catch (error) {
      ctx.logger.warn({ err: error }, 'readiness check failed')
      throw databaseUnavailable()
    }
    return { status: 'ready' }
  })
}
