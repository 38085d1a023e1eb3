import { sql } from 'kysely'
import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import type { RouteModule } from '../../http/typed-app.js'

const Status = Type.Object({ status: Type.String() })

/** Liveness (the process answers) and readiness (the database answers). No credentials. */
export const healthRoutes: RouteModule = async (app, ctx) => {
  app.get('/healthz', { schema: { tags: ['health'], response: { 200: Status } } }, async () => ({
    status: 'ok',
  }))
  app.get('/readyz', { schema: { tags: ['health'], response: { 200: Status } } }, async () => {
    try {
      await sql`select 1`.execute(ctx.db)
    } catch (error) {
      ctx.logger.warn({ err: error }, 'readiness check failed')
      throw new AppError('service_unavailable', 'The database is not reachable')
    }
    return { status: 'ready' }
  })
}
