import type { TSchema } from 'typebox'
import type { ErrorReason } from '../errors.js'
import { PageBody } from './pagination.js'
import { Result, TenantParams } from './schemas.js'

/**
 * The schemas of the routes of a tenant's records (API keys, webhooks, integrations, identity providers
 * and their test sign-ins, tenant roles, SCIM groups): the list, one keyset page at a time; one record by
 * id; a change to one; a new one. What makes a route its own — its operationId, summary, description,
 * tags and its own error reasons — stays beside the route; what follows from the route being one of a
 * tenant's records is stated here once: the tenant in the path, the reasons its access check answers,
 * the page body or the record in the envelope (201 for a new one).
 */

/** A route's own entry in the OpenAPI document. */
export interface RouteWords {
  tags: string[]
  operationId: string
  summary: string
  description: string
}

/** What the access check of every route under /tenants/:tenantId answers: no such tenant, or no permission. */
export const TENANT_ACCESS_ERRORS = ['tenant_not_found', 'permission_denied'] as const

/** GET /tenants/:tenantId/<records>: the tenant's records, one keyset page (`querystring`) at a time. */
export function tenantListSchema<Query extends TSchema, Item extends TSchema>(
  words: RouteWords,
  querystring: Query,
  item: Item,
) {
  return {
    ...words,
    errors: TENANT_ACCESS_ERRORS,
    params: TenantParams,
    querystring,
    response: { 200: PageBody(item) },
  }
}

/** GET /tenants/:tenantId/<records>/:id: one record the tenant owns, or `notFound` (404). */
export function tenantRecordSchema<Params extends TSchema, Item extends TSchema>(
  words: RouteWords,
  params: Params,
  item: Item,
  notFound: ErrorReason,
) {
  return {
    ...words,
    errors: [...TENANT_ACCESS_ERRORS, notFound],
    params,
    response: { 200: Result(item) },
  }
}

/**
 * PUT /tenants/:tenantId/<records>/:id: a change to one record the tenant owns (its route sets
 * `config.ifMatch`), answered with the record; `reasons` are the route's own beyond the access check,
 * its not-found reason first.
 */
export function tenantRecordUpdateSchema<Params extends TSchema, Body extends TSchema, Item extends TSchema>(
  words: RouteWords,
  params: Params,
  body: Body,
  item: Item,
  reasons: readonly ErrorReason[],
) {
  return {
    ...words,
    errors: [...TENANT_ACCESS_ERRORS, ...reasons],
    params,
    body,
    response: { 200: Result(item) },
  }
}

/**
 * POST /tenants/:tenantId/<records>: a new record of the tenant, answered 201 with the record (or, for a
 * record with a secret, the record and its secret: `item`); `reasons` are the route's own beyond the
 * access check.
 */
export function tenantCreateSchema<Body extends TSchema, Item extends TSchema>(
  words: RouteWords,
  body: Body,
  item: Item,
  reasons: readonly ErrorReason[] = [],
) {
  return {
    ...words,
    errors: [...TENANT_ACCESS_ERRORS, ...reasons],
    params: TenantParams,
    body,
    response: { 201: Result(item) },
  }
}
