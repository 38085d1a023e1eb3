import type { FastifyInstance } from 'fastify'

/**
 * JSON is the only body type (API.md §1): every other content type answers 415. An empty body counts
 * as no body, so `POST /v1/login` works whether or not a client sends `Content-Type` with it.
 * Prototype-poisoning keys are refused, as Fastify's own parser does.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string
    if (text.trim() === '') return done(null, undefined)
    return parseJson(request, text, done)
  })
}
