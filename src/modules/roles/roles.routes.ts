import { Type } from 'typebox'
import { created } from '../../http/created.js'
import { PageBody, pageBody } from '../../http/pagination.js'
import { Result, TenantParams } from '../../http/schemas.js'
import { answerTenantList, answerTenantRecord } from '../../http/tenant-record-answers.js'
import {
  tenantCreateSchema,
  tenantRecordSchema,
  tenantRecordUpdateSchema,
} from '../../http/tenant-record-schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { createTenantRole, updateTenantRole } from './role-changes.js'
import {
  CreateRoleBody,
  ListRolesQuery,
  PermissionSchema,
  RoleParams,
  RoleSchema,
  TenantRoleParams,
  UpdateRoleBody,
} from './roles.schemas.js'
import {
  getRole,
  getTenantRole,
  listPermissions,
  listPlatformRoles,
  listTenantPermissions,
  listTenantRoles,
} from './roles.service.js'

const tags = ['roles']
const PermissionList = Result(Type.Array(PermissionSchema))
const RoleList = PageBody(RoleSchema)

/** Permissions and roles (docs/product.md#permissions, docs/api.md#permissions-and-roles, docs/api.md#tenant-roles). */
export const roleRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/permissions',
    {
      schema: {
        tags,
        operationId: 'listPermissions',
        summary: 'The permission catalogue',
        description:
          'Every permission with its fixed id (the same in every installation). Any authenticated caller (no permission needed).',
        response: { 200: PermissionList },
      },
    },
    async () => ({ result: listPermissions() }),
  )

  app.get(
    '/tenants/:tenantId/permissions',
    {
      schema: {
        tags,
        operationId: 'listTenantPermissions',
        summary: 'The permission catalogue, as seen from a tenant',
        description:
          'The permissions a tenant role may carry. Any authenticated caller who can see the tenant (no permission needed).',
        errors: ['tenant_not_found'],
        params: TenantParams,
        response: { 200: PermissionList },
      },
    },
    async (request) => ({
      result: await listTenantPermissions(ctx, request.actor, request.params.tenantId),
    }),
  )

  app.get(
    '/roles',
    {
      schema: {
        tags,
        operationId: 'listPlatformRoles',
        summary: 'The platform roles',
        description: 'The built-in platform roles. Any authenticated caller.',
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
    {
      schema: {
        tags,
        operationId: 'getRole',
        errors: ['role_not_found'],
        summary: 'Get a role by id',
        description:
          'A platform or built-in role: any authenticated caller. A tenant’s own role: VIEW_ALL_ROLES or ' +
          'MANAGE_ALL_ROLES in the tenant that owns it.',
        params: RoleParams,
        response: { 200: Result(RoleSchema) },
      },
    },
    async (request) => ({ result: await getRole(ctx, request.actor, request.params.roleId) }),
  )

  app.get(
    '/tenants/:tenantId/roles',
    {
      schema: {
        tags,
        operationId: 'listTenantRoles',
        errors: ['tenant_not_found'],
        summary: 'The roles usable in a tenant',
        description:
          'The built-in tenant roles, the tenant’s own roles and the shared roles of its ancestors. ' +
          'Needs VIEW_ALL_ROLES or MANAGE_ALL_ROLES in the tenant.',
        params: TenantParams,
        querystring: ListRolesQuery,
        response: { 200: RoleList },
      },
    },
    answerTenantList(ctx, listTenantRoles),
  )

  app.post(
    '/tenants/:tenantId/roles',
    {
      schema: tenantCreateSchema(
        {
          tags,
          operationId: 'createTenantRole',
          summary: 'Create a tenant role',
          description:
            'Needs MANAGE_ALL_ROLES in the tenant. Permissions are named by id or name; every one must be ' +
            'held by the caller in the tenant (403 role_exceeds_caller). Names are unique in the tenant ' +
            '(409 role_name_taken).',
        },
        CreateRoleBody,
        RoleSchema,
        ['role_exceeds_caller', 'role_name_taken'],
      ),
    },
    async (request, reply) => {
      const role = await createTenantRole(ctx, request.actor, request.params.tenantId, request.body)
      return created(reply, `/v1/tenants/${role.tenantId}/roles/${role.id}`, role)
    },
  )

  app.get(
    '/tenants/:tenantId/roles/:roleId',
    {
      schema: tenantRecordSchema(
        {
          tags,
          operationId: 'getTenantRole',
          summary: 'Get a role usable in a tenant',
          description: 'Needs VIEW_ALL_ROLES or MANAGE_ALL_ROLES in the tenant.',
        },
        TenantRoleParams,
        RoleSchema,
        'role_not_found',
      ),
    },
    answerTenantRecord(ctx, 'roleId', getTenantRole),
  )

  app.put(
    '/tenants/:tenantId/roles/:roleId',
    {
      config: { ifMatch: 'roles' },
      schema: tenantRecordUpdateSchema(
        {
          tags,
          operationId: 'updateTenantRole',
          summary: 'Update a tenant role (partial)',
          description:
            'Needs MANAGE_ALL_ROLES in the tenant that owns the role. Built-in roles and an ancestor’s ' +
            'shared roles are read-only here (409 role_read_only). Refused (403 role_exceeds_caller) when ' +
            'the role, its new permissions or anyone holding it exceed the caller. Holders’ permissions ' +
            'follow at once in this process and within 5 seconds in every other.',
        },
        TenantRoleParams,
        UpdateRoleBody,
        RoleSchema,
        ['role_not_found', 'role_exceeds_caller', 'role_name_taken', 'role_read_only'],
      ),
    },
    async (request) => ({
      result: await updateTenantRole(
        ctx,
        request.actor,
        request.params.tenantId,
        request.params.roleId,
        request.body ?? {},
      ),
    }),
  )
}
