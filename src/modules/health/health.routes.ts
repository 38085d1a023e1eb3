import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import type { RouteModule } from '../../http/typed-app.js'
import { pingDatabase } from './health.repository.js'

const Status = Type.Object({ status: Type.String() })

/** Liveness (the process answers) and readiness (the database answers). No credentials. */
export const healthRoutes: RouteModule = async (app, ctx) => {
  app.get('/healthz', { schema: { tags: ['health'], response: { 200: Status } } }, async () => ({
    status: 'ok',
  }))
  app.get('/readyz', { schema: { tags: ['health'], response: { 200: Status } } }, async () => {
    try {
      await pingDatabase(ctx.db)
    } catch (error) {
      ctx.logger.warn({ err: error }, 'readiness check failed')
      throw new AppError('service_unavailable', 'The database is not reachable')
    }
    return { status: 'ready' }
  })
}
