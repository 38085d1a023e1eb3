import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { drainRequestBody } from '../../http/drain.js'
import { registerIdempotency } from '../../http/idempotency.js'
import { nestsDeeperThan, tooDeep } from '../../http/json-body.js'
import type { Authenticator } from '../auth/authenticator.js'
import { GROUP_RESOURCE, USER_RESOURCE } from './scim-attributes.js'
import { scimActor } from './scim-auth.js'
import { type ScimCall, scimBaseUrl } from './scim-context.js'
import {
  findResourceType,
  findSchemaDoc,
  RESOURCES,
  resourceType,
  SCHEMAS,
  schemaDoc,
  serviceProviderConfig,
} from './scim-discovery.js'
import { fromAppError, invalidFilter, ScimError, scimErrorBody } from './scim-error.js'
import { type Filter, parseFilter, pathKey } from './scim-filter.js'
import {
  createScimGroup,
  currentGroup,
  deleteScimGroup,
  findScimGroups,
  GROUP_FILTER_PATHS,
  getScimGroup,
  scimGroupVersion,
  writeScimGroup,
} from './scim-groups.service.js'
import { type ListQuery, listResponse } from './scim-paging.js'
import { applyPatch, readOperations } from './scim-patch.js'
import { attributeList, project, type Resource } from './scim-resources.js'
import {
  createScimUser,
  currentUser,
  deleteScimUser,
  findScimUsers,
  getScimUser,
  scimUserVersion,
  USER_FILTER_PATHS,
  writeScimUser,
} from './scim-users.service.js'
import { readResource } from './scim-values.js'

/**
 * The SCIM 2.0 endpoint (API.md §16) at /scim/v2/tenants/{tenantId}: its own media type, error shape,
 * bearer credential and 404s, in a Fastify context of its own so that nothing of /v1's envelope leaks in.
 */

export const SCIM_MEDIA_TYPE = 'application/scim+json'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DISCOVERY = [
  '/ServiceProviderConfig',
  '/ResourceTypes',
  '/ResourceTypes/:id',
  '/Schemas',
  '/Schemas/:id',
]

type Params = { tenantId: string; id?: string }

function toScimError(error: unknown): ScimError | undefined {
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

function send(reply: FastifyReply, status: number, body: unknown) {
  return reply.code(status).type(SCIM_MEDIA_TYPE).send(body)
}

export function scimRoutes(ctx: ServiceContext, authenticator: Authenticator) {
  return async (app: FastifyInstance) => {
    // SCIM answers in its own shapes: no /v1 error schema on its responses, and not in /openapi.json
    // (its discovery endpoints describe it).
    app.addHook('onRoute', (route) => {
      route.schema = { hide: true }
    })
    const parseJson = app.getDefaultJsonParser('error', 'error')
    app.addContentTypeParser(SCIM_MEDIA_TYPE, { parseAs: 'string' }, (request, body, done) => {
      const text = body as string
      if (text.trim() === '') return done(null, undefined)
      if (nestsDeeperThan(text)) return done(tooDeep(), undefined)
      return parseJson(request, text, done)
    })

    app.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') await drainRequestBody(request.raw)
      let scim = toScimError(error)
      if (!scim || scim.status >= 500) {
        request.log.error({ err: error }, 'SCIM request failed')
        scim = new ScimError(
          scim?.status ?? 500,
          'An internal error occurred; quote the X-Request-Id when reporting it',
        )
      }
      if (scim.headers) reply.headers(scim.headers)
      return send(reply, scim.status, scimErrorBody(scim))
    })
    app.setNotFoundHandler((request, reply) =>
      send(reply, 404, scimErrorBody(new ScimError(404, `No SCIM resource at ${request.url.split('?')[0]}`))),
    )

    app.decorateRequest('actor', null as never)
    app.decorateRequest('scimCall', null as never)
    app.addHook('onRequest', async (request) => {
      const { tenantId } = request.params as Params
      if (!UUID.test(tenantId ?? '')) throw new ScimError(404, 'Resource not found')
      const actor = await scimActor(authenticator, request, tenantId)
      request.actor = actor
      request.scimCall = {
        ctx,
        actor,
        tenantId: actor.tenantId,
        baseUrl: scimBaseUrl(ctx.config.publicUrl, actor.tenantId),
      }
    })
    registerIdempotency(app, ctx.db, ctx.clock)

    const call = (request: FastifyRequest): ScimCall => request.scimCall
    const base = '/tenants/:tenantId'
    const docsUrl = `${ctx.config.publicUrl.replace(/\/+$/, '')}/docs`

    // Discovery: GET only; every other method 405 with Allow.
    app.get(`${base}/ServiceProviderConfig`, async (request, reply) =>
      send(reply, 200, serviceProviderConfig(call(request).baseUrl, docsUrl)),
    )
    app.get(`${base}/ResourceTypes`, async (request, reply) => {
      const items = RESOURCES.map((r) => resourceType(r, call(request).baseUrl))
      return send(reply, 200, listOf(items))
    })
    app.get(`${base}/ResourceTypes/:id`, async (request, reply) => {
      const found = findResourceType((request.params as Params).id ?? '')
      if (!found) throw new ScimError(404, 'No such resource type')
      return send(reply, 200, resourceType(found, call(request).baseUrl))
    })
    app.get(`${base}/Schemas`, async (request, reply) =>
      send(reply, 200, listOf(SCHEMAS.map((s) => schemaDoc(s, call(request).baseUrl)))),
    )
    app.get(`${base}/Schemas/:id`, async (request, reply) => {
      const found = findSchemaDoc((request.params as Params).id ?? '')
      if (!found) throw new ScimError(404, 'No such schema')
      return send(reply, 200, schemaDoc(found, call(request).baseUrl))
    })
    for (const path of DISCOVERY) {
      app.route({
        method: ['POST', 'PUT', 'PATCH', 'DELETE'],
        url: `${base}${path}`,
        handler: async (_request, reply) => {
          reply.header('allow', 'GET')
          return send(reply, 405, scimErrorBody(new ScimError(405, 'Only GET is allowed here')))
        },
      })
    }
    app.all(`${base}/Bulk`, async (_request, reply) =>
      send(reply, 501, scimErrorBody(new ScimError(501, 'Bulk operations are not supported'))),
    )

    // Users
    app.get(`${base}/Users`, async (request, reply) => {
      const query = request.query as ListQuery
      const found = await findScimUsers(call(request), userFilter(query.filter))
      return send(reply, 200, listResponse(found, query))
    })
    app.post(`${base}/Users/.search`, async (request, reply) => {
      const query = searchBody(request.body)
      return send(
        reply,
        200,
        listResponse(await findScimUsers(call(request), userFilter(query.filter)), query),
      )
    })
    app.post(`${base}/Users`, async (request, reply) => {
      const input = readResource(USER_RESOURCE, request.body)
      const created = await createScimUser(call(request), { stored: input.stored, active: input.active })
      return created201(reply, created, request)
    })
    app.get(`${base}/Users/:id`, async (request, reply) => {
      const resource = await getScimUser(call(request), userId(request))
      return sendResource(request, reply, resource)
    })
    app.put(`${base}/Users/:id`, async (request, reply) => {
      const { view } = await currentUser(call(request), userId(request))
      checkIfMatch(request, await scimUserVersion(call(request), userId(request)))
      const input = readResource(USER_RESOURCE, request.body)
      return sendResource(
        request,
        reply,
        await writeScimUser(call(request), view, { stored: input.stored, active: input.active }),
      )
    })
    app.patch(`${base}/Users/:id`, async (request, reply) => {
      const operations = readOperations(request.body)
      const { view, patchable } = await currentUser(call(request), userId(request))
      checkIfMatch(request, await scimUserVersion(call(request), userId(request)))
      const next = applyPatch(USER_RESOURCE, patchable, operations)
      return sendResource(request, reply, await writeScimUser(call(request), view, next))
    })
    app.delete(`${base}/Users/:id`, async (request, reply) => {
      checkIfMatch(request, await scimUserVersion(call(request), userId(request)))
      await deleteScimUser(call(request), userId(request))
      return reply.code(204).send()
    })

    // Groups
    app.get(`${base}/Groups`, async (request, reply) => {
      const query = request.query as ListQuery
      return send(
        reply,
        200,
        listResponse(await findScimGroups(call(request), groupFilter(query.filter)), query),
      )
    })
    app.post(`${base}/Groups/.search`, async (request, reply) => {
      const query = searchBody(request.body)
      return send(
        reply,
        200,
        listResponse(await findScimGroups(call(request), groupFilter(query.filter)), query),
      )
    })
    app.post(`${base}/Groups`, async (request, reply) => {
      const input = readResource(GROUP_RESOURCE, request.body)
      return created201(
        reply,
        await createScimGroup(call(request), { stored: input.stored, active: undefined }),
        request,
      )
    })
    app.get(`${base}/Groups/:id`, async (request, reply) =>
      sendResource(request, reply, await getScimGroup(call(request), groupId(request))),
    )
    app.put(`${base}/Groups/:id`, async (request, reply) => {
      const { row } = await currentGroup(call(request), groupId(request))
      checkIfMatch(request, await scimGroupVersion(call(request), groupId(request)))
      const input = readResource(GROUP_RESOURCE, request.body)
      await writeScimGroup(call(request), row, { stored: input.stored, active: undefined })
      return sendResource(request, reply, await getScimGroup(call(request), row.id))
    })
    app.patch(`${base}/Groups/:id`, async (request, reply) => {
      const operations = readOperations(request.body)
      const { row, patchable } = await currentGroup(call(request), groupId(request))
      checkIfMatch(request, await scimGroupVersion(call(request), groupId(request)))
      await writeScimGroup(call(request), row, applyPatch(GROUP_RESOURCE, patchable, operations))
      // Groups answer 204 (API.md §16), with the new version for a client that keeps it.
      reply.header('etag', await scimGroupVersion(call(request), row.id))
      return reply.code(204).send()
    })
    app.delete(`${base}/Groups/:id`, async (request, reply) => {
      checkIfMatch(request, await scimGroupVersion(call(request), groupId(request)))
      await deleteScimGroup(call(request), groupId(request))
      return reply.code(204).send()
    })

    // Both resource types at once: each takes the filter when its attributes allow it.
    app.post(`${base}/.search`, async (request, reply) => {
      const query = searchBody(request.body)
      const filters = query.filter === undefined ? undefined : parseFilter(query.filter)
      const usable = (allowed: Set<string>) => !filters || filters.every((c) => allowed.has(pathKey(c)))
      if (filters && !usable(USER_FILTER_PATHS) && !usable(GROUP_FILTER_PATHS)) {
        throw invalidFilter('The filter names an attribute that cannot be filtered on')
      }
      const users = usable(USER_FILTER_PATHS) ? await findScimUsers(call(request), filters) : []
      const groups = usable(GROUP_FILTER_PATHS) ? await findScimGroups(call(request), filters) : []
      return send(reply, 200, listResponse([...users, ...groups], query))
    })
  }
}

function listOf(items: unknown[]) {
  return {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
    totalResults: items.length,
    startIndex: 1,
    itemsPerPage: items.length,
    Resources: items,
  }
}

function checkedFilter(text: string | undefined, allowed: Set<string>, kind: string): Filter | undefined {
  if (text === undefined || text === '') return undefined
  const filter = parseFilter(text)
  for (const c of filter) {
    if (!allowed.has(pathKey(c))) throw invalidFilter(`${kind} cannot be filtered on "${pathKey(c)}"`)
    if (c.valueFilter?.some((v) => v.op !== 'eq')) throw invalidFilter('A value filter takes only "eq"')
  }
  return filter
}

const userFilter = (text: string | undefined) => checkedFilter(text, USER_FILTER_PATHS, 'Users')
const groupFilter = (text: string | undefined) => checkedFilter(text, GROUP_FILTER_PATHS, 'Groups')

function searchBody(body: unknown): ListQuery {
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

function userId(request: FastifyRequest): string {
  const id = (request.params as Params).id ?? ''
  if (!UUID.test(id)) throw new ScimError(404, 'User not found')
  return id.toLowerCase()
}

function groupId(request: FastifyRequest): string {
  return (request.params as Params).id ?? ''
}

function checkIfMatch(request: FastifyRequest, version: string): void {
  const header = request.headers['if-match']
  if (header === undefined || header.trim() === '*') return
  const tags = header.split(',').map((t) => t.trim())
  if (!tags.includes(version))
    throw new ScimError(412, 'The resource has changed since it was read (If-Match)')
}

function sendResource(request: FastifyRequest, reply: FastifyReply, resource: Resource) {
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

function created201(reply: FastifyReply, resource: Resource, request: FastifyRequest) {
  const meta = resource.meta as { version: string; location: string }
  reply.header('etag', meta.version).header('location', meta.location)
  const query = request.query as ListQuery
  return send(
    reply,
    201,
    project(resource, attributeList(query.attributes), attributeList(query.excludedAttributes)),
  )
}

declare module 'fastify' {
  interface FastifyRequest {
    scimCall: ScimCall
  }
}
