import { Type } from 'typebox'
import { created } from '../../http/created.js'
import {
  answerTenantList,
  answerTenantRecord,
  answerTenantRecordChange,
} from '../../http/tenant-record-answers.js'
import {
  tenantCreateSchema,
  tenantListSchema,
  tenantRecordSchema,
  tenantRecordUpdateSchema,
} from '../../http/tenant-record-schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import {
  CreateIntegrationBody,
  IntegrationParams,
  IntegrationSchema,
  ListIntegrationsQuery,
  UpdateIntegrationBody,
} from './integrations.schemas.js'
import {
  createIntegration,
  deleteIntegrationById,
  getIntegration,
  listTenantIntegrations,
  updateIntegrationById,
} from './integrations.service.js'

const tags = ['integrations']
const MANAGE = 'Needs MANAGE_ALL_PROVIDERS effective in the tenant.'
const READ = 'Needs VIEW_ALL_PROVIDERS or MANAGE_ALL_PROVIDERS effective in the tenant.'
const READ_ERRORS = ['tenant_not_found', 'permission_denied'] as const

function location(tenantId: string, id: string): string {
  return `/v1/tenants/${tenantId}/integrations/${id}`
}

/** Integrations of a tenant (docs/product.md#integrations, docs/api.md#integrations). */
export const integrationRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tenants/:tenantId/integrations/:integrationId',
    {
      schema: {
        tags,
        operationId: 'createIntegrationWithId',
        summary: 'Create an integration with a chosen id (the brief’s form; answers the record unwrapped)',
        errors: [...READ_ERRORS, 'integration_exists', 'integration_name_taken'],
        description:
          `${MANAGE} ` +
          'Body `{"attributes": {type, name, active, properties, description?}}` (flat fields also taken). ' +
          '201 when created; a repeat with identical attributes answers 200 and the record; different ' +
          'attributes for an existing id answer 409 integration_exists.',
        params: IntegrationParams,
        body: CreateIntegrationBody,
        response: { 200: IntegrationSchema, 201: IntegrationSchema },
      },
    },
    async (request, reply) => {
      const { tenantId, integrationId } = request.params
      const { integration, created: isNew } = await createIntegration(
        ctx,
        request.actor,
        tenantId,
        request.body,
        integrationId,
      )
      if (!isNew) return reply.code(200).send(integration)
      return reply
        .code(201)
        .header('location', location(integration.tenantId, integration.id))
        .send(integration)
    },
  )

  app.post(
    '/tenants/:tenantId/integrations',
    {
      schema: tenantCreateSchema(
        {
          tags,
          operationId: 'createIntegration',
          summary: 'Create an integration',
          description:
            `${MANAGE} ` +
            'Flat body `{type, name, active, properties, description?}`; the `attributes` wrapper is accepted too.',
        },
        CreateIntegrationBody,
        IntegrationSchema,
        ['integration_name_taken'],
      ),
    },
    async (request, reply) => {
      const { integration } = await createIntegration(
        ctx,
        request.actor,
        request.params.tenantId,
        request.body,
      )
      return created(reply, location(integration.tenantId, integration.id), integration)
    },
  )

  app.get(
    '/tenants/:tenantId/integrations',
    {
      schema: tenantListSchema(
        {
          tags,
          operationId: 'listIntegrations',
          summary: 'List the integrations of a tenant',
          description: READ,
        },
        ListIntegrationsQuery,
        IntegrationSchema,
      ),
    },
    answerTenantList(ctx, listTenantIntegrations),
  )

  app.get(
    '/tenants/:tenantId/integrations/:integrationId',
    {
      schema: tenantRecordSchema(
        {
          tags,
          operationId: 'getIntegration',
          summary: 'Get an integration',
          description: `${READ} Secrets read "********" when set.`,
        },
        IntegrationParams,
        IntegrationSchema,
        'integration_not_found',
      ),
    },
    answerTenantRecord(ctx, 'integrationId', getIntegration),
  )

  app.put(
    '/tenants/:tenantId/integrations/:integrationId',
    {
      config: { ifMatch: 'integrations' },
      schema: tenantRecordUpdateSchema(
        {
          tags,
          operationId: 'updateIntegration',
          summary: 'Update an integration (partial: name, description, active, properties)',
          description:
            `${MANAGE} ` +
            'Property keys are merged into the stored ones. A secret sent as "********" keeps its stored value.',
        },
        IntegrationParams,
        UpdateIntegrationBody,
        IntegrationSchema,
        ['integration_not_found', 'integration_name_taken'],
      ),
    },
    answerTenantRecordChange(ctx, 'integrationId', updateIntegrationById),
  )

  app.delete(
    '/tenants/:tenantId/integrations/:integrationId',
    {
      schema: {
        tags,
        operationId: 'deleteIntegration',
        errors: [...READ_ERRORS, 'integration_not_found'],
        summary: 'Delete an integration and destroy its secrets',
        description:
          'Needs MANAGE_ALL_PROVIDERS effective in the tenant (docs/product.md#offboarding-and-erasure). The row and its encrypted ' +
          'secrets are deleted; an `integration.deleted` audit event records who did it. 204, no body.',
        params: IntegrationParams,
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    async (request, reply) => {
      const { tenantId, integrationId } = request.params
      await deleteIntegrationById(ctx, request.actor, tenantId, integrationId)
      return reply.code(204).send(null)
    },
  )
}
