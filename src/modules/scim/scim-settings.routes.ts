import { Type } from 'typebox'
import { Result, TenantParams } from '../../http/schemas.js'
import { tenantRecordUpdateSchema } from '../../http/tenant-record-schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import {
  ScimGroupMappingSchema,
  ScimGroupParams,
  ScimSettingsSchema,
  UpdateScimGroupBody,
  UpdateScimSettingsBody,
} from './scim-settings.schemas.js'
import {
  getScimSettings,
  listScimGroupMappings,
  updateScimGroupMapping,
  updateScimSettings,
} from './scim-settings.service.js'

const tags = ['scim']
const description = 'Needs MANAGE_TENANT_ENROLLMENT effective in the tenant (docs/scim.md).'

/** The /v1 side of SCIM: settings and the groups' role mapping. */
export const scimSettingsRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/tenants/:tenantId/scim',
    {
      schema: {
        tags,
        operationId: 'getScimSettings',
        summary: 'The tenant’s SCIM settings and endpoint',
        errors: ['tenant_not_found', 'permission_denied'],
        description,
        params: TenantParams,
        response: { 200: Result(ScimSettingsSchema) },
      },
    },
    async (request) => ({ result: await getScimSettings(ctx, request.actor, request.params.tenantId) }),
  )
  app.put(
    '/tenants/:tenantId/scim',
    {
      schema: {
        tags,
        operationId: 'updateScimSettings',
        summary: 'Set the role of SCIM-made members that no mapped group decides',
        errors: ['tenant_not_found', 'permission_denied', 'role_exceeds_caller', 'validation_failed'],
        description,
        params: TenantParams,
        body: UpdateScimSettingsBody,
        response: { 200: Result(ScimSettingsSchema) },
      },
    },
    async (request) => ({
      result: await updateScimSettings(ctx, request.actor, request.params.tenantId, request.body),
    }),
  )
  app.get(
    '/tenants/:tenantId/scim/groups',
    {
      schema: {
        tags,
        operationId: 'listScimGroups',
        summary: 'The tenant’s SCIM groups and their role mapping',
        errors: ['tenant_not_found', 'permission_denied'],
        description,
        params: TenantParams,
        response: { 200: Result(Type.Array(ScimGroupMappingSchema)) },
      },
    },
    async (request) => ({ result: await listScimGroupMappings(ctx, request.actor, request.params.tenantId) }),
  )
  app.put(
    '/tenants/:tenantId/scim/groups/:groupId',
    {
      config: { ifMatch: 'scim_groups' },
      schema: tenantRecordUpdateSchema(
        {
          tags,
          operationId: 'updateScimGroup',
          summary: 'Map a SCIM group to a tenant role (or unmap it) and set its priority',
          description: `${description} Members’ roles follow at once; every role assigned obeys the ceiling.`,
        },
        ScimGroupParams,
        UpdateScimGroupBody,
        ScimGroupMappingSchema,
        ['not_found', 'role_exceeds_caller', 'validation_failed'],
      ),
    },
    async (request) => ({
      result: await updateScimGroupMapping(
        ctx,
        request.actor,
        request.params.tenantId,
        request.params.groupId,
        request.body,
      ),
    }),
  )
}
