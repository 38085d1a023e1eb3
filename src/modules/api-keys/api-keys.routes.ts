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
  ApiKeyParams,
  ApiKeySchema,
  CreateApiKeyBody,
  ListApiKeysQuery,
  NewApiKeySchema,
  UpdateApiKeyBody,
} from './api-keys.schemas.js'
import { createApiKey, getApiKey, listTenantApiKeys, updateApiKey } from './api-keys.service.js'

const tags = ['api keys']
const description = 'Needs MANAGE_ALL_APP_CREDENTIALS effective in the tenant.'

/** API keys of a tenant (docs/api.md#api-keys): used as `Basic keyId:secret` or through POST /v1/tokens. */
export const apiKeyRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tenants/:tenantId/api-keys',
    {
      schema: tenantCreateSchema(
        {
          tags,
          operationId: 'createApiKey',
          summary: 'Create an API key; its secret is shown once',
          description: `${description} roleId must be a tenant role within the caller’s permissions there. A step-up operation for a person with a second factor: without one from the last 10 minutes, 401 reauthentication_required carrying the challenge (docs/security.md, "Step-up").`,
        },
        CreateApiKeyBody,
        NewApiKeySchema,
        ['role_exceeds_caller', 'scim_key_limit', 'reauthentication_required'],
      ),
    },
    async (request, reply) => {
      const { tenantId } = request.params
      const key = await createApiKey(ctx, request.actor, tenantId, request.body)
      return created(reply, `/v1/tenants/${key.tenantId}/api-keys/${key.id}`, key, { secret: true })
    },
  )

  app.get(
    '/tenants/:tenantId/api-keys',
    {
      schema: tenantListSchema(
        {
          tags,
          operationId: 'listApiKeys',
          summary: 'List the API keys of a tenant (never their secrets)',
          description,
        },
        ListApiKeysQuery,
        ApiKeySchema,
      ),
    },
    answerTenantList(ctx, listTenantApiKeys),
  )

  app.get(
    '/tenants/:tenantId/api-keys/:keyId',
    {
      schema: tenantRecordSchema(
        { tags, operationId: 'getApiKey', summary: 'Get an API key', description },
        ApiKeyParams,
        ApiKeySchema,
        'api_key_not_found',
      ),
    },
    answerTenantRecord(ctx, 'keyId', getApiKey),
  )

  app.put(
    '/tenants/:tenantId/api-keys/:keyId',
    {
      config: { ifMatch: 'api_keys' },
      schema: tenantRecordUpdateSchema(
        { tags, operationId: 'updateApiKey', summary: 'Enable or disable an API key', description },
        ApiKeyParams,
        UpdateApiKeyBody,
        ApiKeySchema,
        ['api_key_not_found', 'scim_key_limit'],
      ),
    },
    answerTenantRecordChange(ctx, 'keyId', updateApiKey),
  )
}
