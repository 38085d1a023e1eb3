import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/**
 * How deeply objects and arrays may nest in a body. No request of the API nests past a handful of
 * levels; the bound is checked on the text before it is parsed, so that nothing that walks a body
 * afterwards (validation, the idempotency fingerprint, logging) meets one deep enough to exhaust the stack.
 */
export const MAX_JSON_DEPTH = 32

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Whether `text` nests objects and arrays deeper than `max`: one pass over the characters, brackets
 * inside strings not counted. Malformed text is left to the parser to refuse.
 */
export function nestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--
  }
  return false
}

export function tooDeep(what = 'The request body'): AppError {
  return new AppError(
    'validation_failed',
    `${what} nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`,
    { body: `nests deeper than ${MAX_JSON_DEPTH} levels` },
  )
}

/**
 * JSON is the only body type (docs/api.md#conventions): every other content type answers 415. An empty body counts
 * as no body, so `POST /v1/login` works whether or not a client sends `Content-Type` with it.
 * Prototype-poisoning keys are refused, as Fastify's own parser does, and so is nesting past
 * MAX_JSON_DEPTH.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string
    if (text.trim() === '') return done(null, undefined)
    if (nestsDeeperThan(text)) return done(tooDeep(), undefined)
    return parseJson(request, text, done)
  })
}
