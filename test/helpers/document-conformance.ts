import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/**
 * Holds the published OpenAPI document to what the service accepts, on every request a test sends
 * (issue 29 item 7). For each JSON body sent to an operation the document describes:
 * - the service answered 2xx → the document must allow the body (it does not say less than the service
 *   takes);
 * - the route's validator refused the body for its shape (400 before any service logic) → the document
 *   must refuse it too (a request the document allows is not refused for its shape).
 * The body is judged as the client sent it, before validation drops unknown fields or fills defaults.
 * Every test app installs this (test-app.ts); a violation fails the test file when its app closes.
 */
const WATCHED_BODY_BYTES = 64 * 1024
/**
 * Bulk forms that judge each row on its own (docs/api.md#bulk-load-of-platform-users): a 200 answers a verdict per row, so a row the
 * document refuses is reported in that row's result, not accepted — the array is the shape judged.
 */
const ROW_BY_ROW = new Set(['POST /v1/users'])

export function watchBodiesAgainstDocument(app: FastifyInstance): string[] {
  const violations: string[] = []
  const sent = new WeakMap<FastifyRequest, unknown>()
  const refusedForShape = new WeakSet<FastifyRequest>()
  let validatorOf: ((method: string, url: string) => ValidateFunction | undefined) | undefined

  app.addHook('preValidation', async (request) => {
    const type = String(request.headers['content-type'] ?? '')
    if (!type.startsWith('application/json') || request.body === undefined) return
    // Bodies this large are the hostile-input and limit tests', timed per request: not shapes to compare.
    if (Number(request.headers['content-length'] ?? 0) > WATCHED_BODY_BYTES) return
    sent.set(request, structuredClone(request.body))
  })
  app.addHook('onError', async (request, _reply, error) => {
    if ((error as { validationContext?: string }).validationContext === 'body') refusedForShape.add(request)
  })
  app.addHook('onResponse', async (request, reply) => {
    if (!sent.has(request)) return
    validatorOf ??= documentValidators(app.swagger() as OpenApiDocument)
    const validate = validatorOf(request.method, request.routeOptions.url ?? '')
    if (!validate) return
    const body = sent.get(request)
    const allowed = validate(body) === true
    const where = `${request.method} ${request.routeOptions.url}`
    const shown = JSON.stringify(body).slice(0, 400)
    const judgedByRow = ROW_BY_ROW.has(where) && Array.isArray(body)
    if (reply.statusCode < 300 && !allowed && !judgedByRow) {
      const why = validate.errors?.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')
      violations.push(
        `${where} answered ${reply.statusCode} to a body the document refuses (${why}): ${shown}`,
      )
    }
    if (refusedForShape.has(request) && allowed) {
      violations.push(`${where} refused for its shape a body the document allows: ${shown}`)
    }
  })
  return violations
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: object }> } }>>
}

/** The document's application/json request body validator of each operation, by method and route URL. */
export function documentValidators(
  document: OpenApiDocument,
): (method: string, routeUrl: string) => ValidateFunction | undefined {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  ;(addFormats as unknown as (ajv: Ajv2020) => void)(ajv)
  ajv.addSchema(document as object, 'openapi')
  const compiled = new Map<string, ValidateFunction | undefined>()
  return (method, routeUrl) => {
    const path = routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    const verb = method.toLowerCase()
    const key = `${verb} ${path}`
    if (!compiled.has(key)) {
      const media = document.paths?.[path]?.[verb]?.requestBody?.content?.['application/json']
      const pointer = `openapi#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${verb}/requestBody/content/application~1json/schema`
      compiled.set(key, media?.schema ? ajv.compile({ $ref: pointer }) : undefined)
    }
    return compiled.get(key)
  }
}
