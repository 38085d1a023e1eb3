import { Type } from 'typebox'
import { databaseUnavailable } from '../../db/connection-errors.js'
import type { RouteModule } from '../../http/typed-app.js'
import { pingDatabase } from './health.repository.js'

const Status = (status: string) =>
  Type.Object({ status: Type.String() }, { examples: [{ status }], description: 'Healthy' })
const tags = ['health']

/**
 * Liveness (the process answers; it never touches the database) and readiness (the database answers: 503
 * database_unavailable with Retry-After when it does not). No credentials.
 */
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
        errors: ['database_unavailable'],
        response: { 200: Status('ready') },
      },
    },
    async () => {
      try {
        await pingDatabase(ctx.db)
      } catch (error) {
        ctx.logger.warn({ err: error }, 'readiness check failed')
        throw databaseUnavailable()
      }
      return { status: 'ready' }
    },
  )
}
