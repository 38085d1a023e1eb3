import type { FastifySchema, RouteOptions } from 'fastify'
import { type TSchema, Type } from 'typebox'
import { ERROR_REASON_OTHER_STATUSES, ERROR_REASONS, type ErrorReason } from '../errors.js'

/**
 * How the route schemas become the published OpenAPI document (docs/api.md, "The OpenAPI document").
 * Routes declare tags, operationId, summary, description, body examples and `errors` — the reasons their
 * own logic answers — beside themselves. This file adds what follows from how a route is mounted: the
 * credentials it takes (from its `auth` mode), the failures every route of its kind can answer
 * (validation, credentials, idempotency, If-Match, 500), one error response per status with the reasons
 * of that status, and strips validator-only keywords from the published schemas.
 */

declare module 'fastify' {
  interface FastifySchema {
    /** The error reasons this route's own logic can answer; the ones its kind shares are added. */
    errors?: readonly ErrorReason[]
  }
}

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A token from POST /v1/tokens: `Authorization: Bearer <jwt>`. Older clients send `Token <jwt>`; ' +
      'both are accepted.',
  },
  basicAuth: {
    type: 'http',
    scheme: 'basic',
    description: 'A platform user’s `email:password`, or an API key’s `keyId:secret`.',
  },
  invitationToken: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      '`Token <invitation token>` from an invitation link: accepted only where an operation says so, and ' +
      'only to accept that invitation.',
  },
} as const

type Security = { [scheme in keyof typeof SECURITY_SCHEMES]?: string[] }[]

/** A user or an API key, by token or by Basic credentials. */
export const AUTHENTICATED: Security = [{ bearerAuth: [] }, { basicAuth: [] }]

/** The `security` of a route, from the auth mode the authentication hook enforces on it. */
function securityOf(route: RouteOptions, schema: FastifySchema): Security | FastifySchema['security'] {
  const mode = (route.config as { auth?: string } | undefined)?.auth
  if (mode === undefined) return schema.security ?? [] // mounted outside /v1: no credentials asked
  if (mode === 'public') return []
  if (mode === 'invitation') return [...AUTHENTICATED, { invitationToken: [] }]
  return AUTHENTICATED
}

/** The reasons a route can answer: its own, and those that follow from how it is mounted. */
function reasonsOf(route: RouteOptions, schema: FastifySchema, security: unknown[]): ErrorReason[] {
  const reasons = new Set<ErrorReason>(schema.errors ?? [])
  const method = String(route.method).toUpperCase()
  const authenticated = security.length > 0
  if (schema.body) {
    reasons.add('validation_failed').add('invalid_json').add('unsupported_media_type')
    reasons.add('payload_too_large')
  }
  if (schema.params || schema.querystring) reasons.add('validation_failed')
  if (authenticated) reasons.add('unauthorized').add('rate_limited')
  // Idempotency-Key on an authenticated POST; If-Match on a PUT (docs/api.md#safe-retries).
  if (authenticated && method === 'POST') reasons.add('validation_failed').add('idempotency_key_reused')
  if (authenticated && method === 'PUT') reasons.add('precondition_failed')
  // The password rule (docs/product.md#password-rule) holds on every resource of a tenant; any route that reads the
  // database answers 503 while it is unreachable (issue 18).
  // So does a tenant's second-factor policy (docs/security.md, "Policy"): 403 mfa_required.
  if (authenticated && String(route.url).includes(':tenantId'))
    reasons.add('sso_required').add('mfa_required')
  if (route.url !== '/healthz') reasons.add('database_unavailable')
  reasons.add('internal')
  return Object.keys(ERROR_REASONS).filter((reason) => reasons.has(reason as ErrorReason)) as ErrorReason[]
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'No or invalid credentials',
  403: 'Not allowed',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition failed',
  413: 'Too large',
  415: 'Unsupported media type',
  429: 'Too many requests (see Retry-After)',
  500: 'Internal error (the log has the cause, under the request id)',
  503: 'Unavailable',
}

const EXAMPLE_MESSAGES: Partial<Record<ErrorReason, string>> = {
  validation_failed: 'Invalid name (is required)',
  unauthorized: 'Credentials are required',
  permission_denied: 'MANAGE_TENANT is required in this tenant',
  rate_limited: 'Too many failed attempts; try again later',
  internal: 'An internal error occurred; quote the request id when reporting it',
}

/** `tenant_not_found` → "Tenant not found". */
function sentence(reason: string): string {
  const words = reason.replace(/_/g, ' ')
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/** The error envelope of docs/api.md#conventions with `reason` narrowed to what this status can carry here. */
function errorResponse(status: number, reasons: ErrorReason[]): TSchema {
  const first = reasons[0]!
  return Type.Object(
    {
      error: Type.Object({
        code: Type.Integer({ description: 'The HTTP status', examples: [status] }),
        reason: Type.Enum(reasons, { type: 'string', description: 'Stable identifier of the failure' }),
        message: Type.String({ description: 'For people; do not match on it' }),
        attribute: Type.Optional(
          Type.Record(Type.String(), Type.String(), {
            description: 'Request field → what is wrong with it',
          }),
        ),
        requestId: Type.Optional(Type.String()),
      }),
    },
    {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${reasons.map((r) => `\`${r}\``).join(', ')}`,
      examples: [
        {
          error: {
            code: status,
            reason: first,
            message: EXAMPLE_MESSAGES[first] ?? sentence(first),
            ...(first === 'validation_failed' ? { attribute: { name: 'is required' } } : {}),
            requestId: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
          },
        },
      ],
    },
  )
}

/** @fastify/swagger's per-route transform: security, error responses, the reasons listed. */
export function documentRoute({
  schema,
  url,
  route,
}: {
  schema: FastifySchema
  url: string
  route: RouteOptions
}): { schema: FastifySchema; url: string } {
  if (!schema || schema.hide) return { schema, url }
  const security = (securityOf(route, schema) ?? []) as unknown[]
  const reasons = reasonsOf(route, schema, security)
  const response: Record<string, unknown> = { ...(schema.response as object) }
  delete response['4xx']
  delete response['5xx']
  const byStatus = new Map<number, ErrorReason[]>()
  for (const reason of reasons) {
    for (const status of [ERROR_REASONS[reason], ...(ERROR_REASON_OTHER_STATUSES[reason] ?? [])])
      byStatus.set(status, [...(byStatus.get(status) ?? []), reason])
  }
  for (const [status, list] of byStatus) response[status] = errorResponse(status, list)
  // Whatever else the server may say (405, 503 while shutting down) comes in the same envelope.
  response.default = { $ref: 'ErrorBody#', description: 'Any other failure, in the same envelope' }
  const documented = { ...schema, security, response, 'x-error-reasons': reasons } as FastifySchema
  delete documented.errors
  return { schema: documented, url }
}

/**
 * The document with every request body open: unknown body fields are accepted and ignored (docs/api.md#conventions),
 * and the validator's `additionalProperties: false` only tells it to drop them — a generated client or
 * validator must not read it as a refusal. Responses keep their schemas.
 */
export function withOpenRequestBodies<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, unknown>> }).paths ?? {}
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const content = (operation as { requestBody?: { content?: Record<string, { schema?: unknown }> } })
        .requestBody?.content
      for (const media of Object.values(content ?? {})) {
        if (media.schema !== undefined) media.schema = withoutClosedObjects(media.schema)
      }
    }
  }
  return document
}

/** A copy of a schema without `additionalProperties: false` at any depth. */
function withoutClosedObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutClosedObjects)
  if (value === null || typeof value !== 'object') return value
  const copy: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    if (key === 'additionalProperties' && child === false) continue
    copy[key] = DATA.has(key) ? child : withoutClosedObjects(child)
  }
  return copy
}

// Keywords our validator reads (validation.ts) that are not JSON Schema: never published.
const VALIDATOR_ONLY = new Set(['errorMessage'])
// Keywords whose values are data (or maps of names), not schemas: copied as they are.
const DATA = new Set(['example', 'examples', 'default', 'const', 'enum', 'x-error-reasons'])
const NAMED_SCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'schemas'])

/** A copy of the document without validator-only keywords; the route schemas themselves are untouched. */
export function withoutValidatorKeywords<T>(value: T): T {
  return strip(value, false) as T
}

function strip(value: unknown, namesOnly: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => strip(item, false))
  if (value === null || typeof value !== 'object') return value
  const copy: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    if (namesOnly) {
      copy[key] = strip(child, false) // a property name, whatever it is called
    } else if (VALIDATOR_ONLY.has(key)) {
      // dropped
    } else if (DATA.has(key)) {
      copy[key] = child
    } else {
      copy[key] = strip(child, NAMED_SCHEMAS.has(key))
    }
  }
  return copy
}
