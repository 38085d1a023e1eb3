import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

/**
 * What every answer of the reference carries (docs/api.md, "The OpenAPI document"), like the service's
 * pages: never framed by another site (clickjacking through the "Try it out" forms), not sniffed, and
 * not served from a cache after a deploy changed the document. `no-cache` rather than the pages'
 * `no-store`: the document holds nothing secret, it must only be fetched again. The UI's static files
 * keep the cache policy @fastify/static gives them.
 */
export const DOCS_HEADERS = {
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'; base-uri 'none'",
} as const

/**
 * The interactive reference at /docs and the document at /openapi.json, in a scope of their own whose
 * hook puts DOCS_HEADERS on every answer. `@fastify/swagger` must be registered before.
 */
export async function registerDocsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(async (docs) => {
    docs.addHook('onRequest', async (_request, reply) => {
      reply.headers(DOCS_HEADERS)
    })
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } })
    docs.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  })
}
