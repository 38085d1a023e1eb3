import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ServiceContext } from '../../context.js'
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
import { invalidFilter, ScimError, scimErrorBody } from './scim-error.js'
import { parseFilter, pathKey } from './scim-filter.js'
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
import {
  checkIfMatch,
  created201,
  groupFilter,
  groupId,
  listOf,
  type Params,
  SCIM_MEDIA_TYPE,
  searchBody,
  send,
  sendResource,
  toScimError,
  UUID,
  userFilter,
  userId,
} from './scim-http.js'
import { type ListQuery, listResponse } from './scim-paging.js'
import { applyPatch, readOperations } from './scim-patch.js'
import { createScimUser } from './scim-user-create.service.js'
import { findScimUsers, USER_FILTER_PATHS } from './scim-users.query.js'
import {
  currentUser,
  deleteScimUser,
  getScimUser,
  scimUserVersion,
  writeScimUser,
} from './scim-users.service.js'
import { readResource } from './scim-values.js'

/**
 * The SCIM 2.0 endpoint (docs/scim.md) at /scim/v2/tenants/{tenantId}: its own media type, error shape,
 * bearer credential and 404s, in a Fastify context of its own so that nothing of /v1's envelope leaks in.
 */

const DISCOVERY = [
  '/ServiceProviderConfig',
  '/ResourceTypes',
  '/ResourceTypes/:id',
  '/Schemas',
  '/Schemas/:id',
]

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
    registerIdempotency(app, ctx.db, ctx.clock, ctx.keys)

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
      // Groups answer 204 (docs/scim.md), with the new version for a client that keeps it.
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

declare module 'fastify' {
  interface FastifyRequest {
    scimCall: ScimCall
  }
}
