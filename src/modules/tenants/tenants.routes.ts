import { PageBody, pageBody } from '../../http/pagination.js'
import { Result, TenantParams } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { CreateTenantBody, ListTenantsQuery, TenantSchema, UpdateTenantBody } from './tenants.schemas.js'
import { createTenant, getTenant, listVisibleTenants, updateTenantById } from './tenants.service.js'

const tags = ['tenants']

/** Tenants (SPEC §4.1, API.md §4.2). */
export const tenantRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tenants',
    {
      schema: {
        tags,
        summary: 'Create a tenant or sub-tenant',
        body: CreateTenantBody,
        response: { 201: Result(TenantSchema) },
      },
    },
    async (request, reply) => {
      const tenant = await createTenant(ctx, request.actor, request.body)
      return reply.code(201).header('location', `/v1/tenants/${tenant.id}`).send({ result: tenant })
    },
  )

  app.get(
    '/tenants',
    {
      schema: {
        tags,
        summary: 'List the tenants the caller can read',
        querystring: ListTenantsQuery,
        response: {
          200: PageBody(TenantSchema),
        },
      },
    },
    async (request) => {
      const page = await listVisibleTenants(ctx, request.actor, request.query)
      return pageBody(page)
    },
  )

  app.get(
    '/tenants/:tenantId',
    {
      schema: {
        tags,
        summary: 'Get a tenant',
        params: TenantParams,
        response: { 200: Result(TenantSchema) },
      },
    },
    async (request) => ({ result: await getTenant(ctx, request.actor, request.params.tenantId) }),
  )

  app.put(
    '/tenants/:tenantId',
    {
      schema: {
        tags,
        summary: 'Update a tenant (partial)',
        params: TenantParams,
        body: UpdateTenantBody,
        response: { 200: Result(TenantSchema) },
      },
    },
    async (request) => ({
      result: await updateTenantById(ctx, request.actor, request.params.tenantId, request.body ?? {}),
    }),
  )
}
