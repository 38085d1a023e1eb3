import type { Actor } from '../access/actor.js'
import type { ServiceContext } from '../context.js'
import { type Page, pageBody } from './pagination.js'

/**
 * The handlers of the routes of a tenant's records that list, read and change them
 * (http/tenant-record-schemas.ts states their schemas): the module's service is asked as the caller, for
 * the tenant in the path, and its answer goes out as the page body (a list) or in the envelope (one
 * record). The service checks the access; a route whose service takes more than the tenant, the record's
 * id and the query or body writes its own handler.
 */

/** The handler of a tenantListSchema route: `list`'s keyset page of the tenant's records. */
export function answerTenantList<Query, Item>(
  ctx: ServiceContext,
  list: (ctx: ServiceContext, actor: Actor, tenantId: string, query: Query) => Promise<Page<Item>>,
) {
  return async (request: { actor: Actor; params: { tenantId: string }; query: Query }) =>
    pageBody(await list(ctx, request.actor, request.params.tenantId, request.query))
}

/** The handler of a tenantRecordSchema route: `read`'s record of the tenant, by the path's `idParam`. */
export function answerTenantRecord<IdParam extends string, Item>(
  ctx: ServiceContext,
  idParam: IdParam,
  read: (ctx: ServiceContext, actor: Actor, tenantId: string, id: string) => Promise<Item>,
) {
  return async (request: { actor: Actor; params: { tenantId: string } & Record<IdParam, string> }) => ({
    result: await read(ctx, request.actor, request.params.tenantId, request.params[idParam]),
  })
}

/**
 * The handler of a tenantRecordUpdateSchema route: `change` applied to the tenant's record by the path's
 * `idParam` with the body, answered with the changed record (the route's If-Match is checked in the write).
 */
export function answerTenantRecordChange<IdParam extends string, Body, Item>(
  ctx: ServiceContext,
  idParam: IdParam,
  change: (ctx: ServiceContext, actor: Actor, tenantId: string, id: string, body: Body) => Promise<Item>,
) {
  return async (request: {
    actor: Actor
    params: { tenantId: string } & Record<IdParam, string>
    body: Body
  }) => ({
    result: await change(ctx, request.actor, request.params.tenantId, request.params[idParam], request.body),
  })
}
