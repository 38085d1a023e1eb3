import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../errors.js'
import { LIST_SCHEMA } from './scim-attributes.js'
import { fromAppError, invalidFilter, ScimError } from './scim-error.js'
import { type Filter, parseFilter, pathKey } from './scim-filter.js'
import { GROUP_FILTER_PATHS } from './scim-groups.service.js'
import type { ListQuery } from './scim-paging.js'
import { attributeList, project, type Resource } from './scim-resources.js'
import { USER_FILTER_PATHS } from './scim-users.query.js'

/** The SCIM endpoint's HTTP pieces (scim.routes.ts): media type, errors, ids, filters, ETags, bodies. */

export const SCIM_MEDIA_TYPE = 'application/scim+json'
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export type Params = { tenantId: string; id?: string }

export function toScimError(error: unknown): ScimError | undefined {
  if (error instanceof ScimError) return error
  if (error instanceof AppError) return fromAppError(error)
  const fastify = error as FastifyError
  if (fastify.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new ScimError(415, 'The request body must be application/scim+json or application/json')
  }
  if (fastify.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ScimError(413, 'The request body is larger than 1 MiB')
  if (fastify.code?.startsWith('FST_ERR_CTP_') || error instanceof SyntaxError) {
    return new ScimError(400, 'The request body is not valid JSON', 'invalidSyntax')
  }
  const status = fastify.statusCode
  if (status !== undefined && status >= 400 && status < 500) return new ScimError(status, fastify.message)
  return undefined
}

export function send(reply: FastifyReply, status: number, body: unknown) {
  return reply.code(status).type(SCIM_MEDIA_TYPE).send(body)
}

export function listOf(items: unknown[]) {
  return {
    schemas: [LIST_SCHEMA],
    totalResults: items.length,
    startIndex: 1,
    itemsPerPage: items.length,
    Resources: items,
  }
}

export function checkedFilter(
  text: string | undefined,
  allowed: Set<string>,
  kind: string,
): Filter | undefined {
  if (text === undefined || text === '') return undefined
  const filter = parseFilter(text)
  for (const c of filter) {
    if (!allowed.has(pathKey(c))) throw invalidFilter(`${kind} cannot be filtered on "${pathKey(c)}"`)
    if (c.valueFilter?.some((v) => v.op !== 'eq')) throw invalidFilter('A value filter takes only "eq"')
  }
  return filter
}

export const userFilter = (text: string | undefined) => checkedFilter(text, USER_FILTER_PATHS, 'Users')
export const groupFilter = (text: string | undefined) => checkedFilter(text, GROUP_FILTER_PATHS, 'Groups')

export function searchBody(body: unknown): ListQuery {
  if (body === undefined) return {}
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ScimError(400, 'The request body must be a SearchRequest object', 'invalidSyntax')
  }
  const b = body as Record<string, unknown>
  const list = (v: unknown) => (Array.isArray(v) ? v.join(',') : typeof v === 'string' ? v : undefined)
  const out: ListQuery = {}
  if (typeof b.filter === 'string') out.filter = b.filter
  if (typeof b.startIndex === 'number' || typeof b.startIndex === 'string') out.startIndex = b.startIndex
  if (typeof b.count === 'number' || typeof b.count === 'string') out.count = b.count
  const attributes = list(b.attributes)
  const excluded = list(b.excludedAttributes)
  if (attributes !== undefined) out.attributes = attributes
  if (excluded !== undefined) out.excludedAttributes = excluded
  return out
}

export function userId(request: FastifyRequest): string {
  const id = (request.params as Params).id ?? ''
  if (!UUID.test(id)) throw new ScimError(404, 'User not found')
  return id.toLowerCase()
}

export function groupId(request: FastifyRequest): string {
  return (request.params as Params).id ?? ''
}

export function checkIfMatch(request: FastifyRequest, version: string): void {
  const header = request.headers['if-match']
  if (header === undefined || header.trim() === '*') return
  const tags = header.split(',').map((t) => t.trim())
  if (!tags.includes(version))
    throw new ScimError(412, 'The resource has changed since it was read (If-Match)')
}

export function sendResource(request: FastifyRequest, reply: FastifyReply, resource: Resource) {
  const version = (resource.meta as { version: string }).version
  reply.header('etag', version)
  const noneMatch = request.headers['if-none-match']
  if (
    request.method === 'GET' &&
    noneMatch &&
    noneMatch
      .split(',')
      .map((t) => t.trim())
      .includes(version)
  ) {
    return reply.code(304).send()
  }
  const query = request.query as ListQuery
  return send(
    reply,
    200,
    project(resource, attributeList(query.attributes), attributeList(query.excludedAttributes)),
  )
}

export function created201(reply: FastifyReply, resource: Resource, request: FastifyRequest) {
  const meta = resource.meta as { version: string; location: string }
  reply.header('etag', meta.version).header('location', meta.location)
  const query = request.query as ListQuery
  return send(
    reply,
    201,
    project(resource, attributeList(query.attributes), attributeList(query.excludedAttributes)),
  )
}
