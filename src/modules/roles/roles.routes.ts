import { Type } from 'typebox'
import { PageBody, pageBody } from '../../http/pagination.js'
import { Result, TenantParams } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { ListRolesQuery, PermissionSchema, RoleParams, RoleSchema } from './roles.schemas.js'
import { getRole, listPermissions, listPlatformRoles, listTenantRoles } from './roles.service.js'

const tags = ['roles']
const RoleList = PageBody(RoleSchema)

/** Permissions and roles (API.md §3, §4.6). */
export const roleRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/permissions',
    {
      schema: {
        tags,
        summary: 'The closed list of permission names',
        response: { 200: Result(Type.Array(PermissionSchema)) },
      },
    },
    async () => ({ result: listPermissions() }),
  )

  app.get(
    '/roles',
    {
      schema: {
        tags,
        summary: 'The platform roles',
        querystring: ListRolesQuery,
        response: { 200: RoleList },
      },
    },
    async (request) => {
      const page = await listPlatformRoles(ctx, request.query)
      return pageBody(page)
    },
  )

  app.get(
    '/roles/:roleId',
    { schema: { tags, summary: 'Get a role', params: RoleParams, response: { 200: Result(RoleSchema) } } },
    async (request) => ({ result: await getRole(ctx, request.actor, request.params.roleId) }),
  )

  app.get(
    '/tenants/:tenantId/roles',
    {
      schema: {
        tags,
        summary: 'The tenant roles usable in a tenant: the built-in ones and the tenant’s own',
        params: TenantParams,
        querystring: ListRolesQuery,
        response: { 200: RoleList },
      },
    },
    async (request) => {
      const page = await listTenantRoles(ctx, request.actor, request.params.tenantId, request.query)
      return pageBody(page)
    },
  )
}
