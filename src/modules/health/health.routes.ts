import { sql } from 'kysely'
import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import type { RouteModule } from '../../http/typed-app.js'

const Status = (status: string) =>
  Type.Object({ status: Type.String() }, { examples: [{ status }], description: 'Healthy' })
const tags = ['health']

/** Liveness (the process answers) and readiness (the database answers). No credentials. */
export const healthRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags,
        operationId: 'getLiveness',
        summary: 'Liveness: the process answers',
        description: 'No credentials. 200 as long as the process serves requests; it reads nothing.',
        response: { 200: Status('ok') },
      },
    },
    async () => ({ status: 'ok' }),
  )
  app.get(
    '/readyz',
    {
      schema: {
        tags,
        operationId: 'getReadiness',
        summary: 'Readiness: the database answers',
        description: 'No credentials. 200 when a query to the database succeeds, 503 otherwise.',
        errors: ['service_unavailable'],
        response: { 200: Status('ready') },
      },
    },
    async () => {
      try {
        await sql`select 1`.execute(ctx.db)
      } catch (error) {
        ctx.logger.warn({ err: error }, 'readiness check failed')
        throw new AppError('service_unavailable', 'The database is not reachable')
      }
      return { status: 'ready' }
    },
  )
}
