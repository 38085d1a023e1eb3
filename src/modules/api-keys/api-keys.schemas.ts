import { type Static, Type } from 'typebox'
import { ROLE_IDS } from '../../access/permissions.js'
import { API_KEY_SCOPES, API_KEY_STATUSES } from '../../db/schema.js'
import { Body, Description, Name, Nullable, PageQuery, Timestamp, Uuid } from '../../http/schemas.js'

/** API key shapes (docs/api.md#api-keys). The secret appears only in the create response, once. */

const ApiKeyStatus = Type.Enum(API_KEY_STATUSES, { type: 'string' })
const ApiKeyScope = Type.Enum(API_KEY_SCOPES, {
  type: 'string',
  description:
    '`api` (default): used on /v1 as `Basic keyId:secret` or through POST /v1/tokens. `scim`: a SCIM ' +
    'bearer token for this tenant’s /scim/v2 endpoint only (docs/scim.md); at most two live per tenant.',
})

const apiKeyFields = {
  id: Uuid({ description: 'Also the username of `Basic keyId:secret` and of POST /v1/tokens' }),
  tenantId: Uuid(),
  name: Type.String(),
  description: Type.String(),
  roleId: Uuid({ description: 'A tenant role; the key acts with it in its tenant and the sub-tenants' }),
  status: Type.String({ description: API_KEY_STATUSES.join(' | ') }),
  scope: Type.String({ description: API_KEY_SCOPES.join(' | ') }),
  expiresAt: Nullable(Timestamp({ description: 'After it the key is refused; null: never' })),
  created: Timestamp(),
  createdBy: Uuid({ description: 'The user on whose authority the key was created' }),
  updated: Timestamp(),
  updatedBy: Uuid(),
}

const apiKeyExample = {
  id: '0193a6f3-7a1b-7c2d-8e3f-4a5b6c7d8e9f',
  tenantId: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
  name: 'CRM sync',
  description: 'Nightly contact sync from the CRM',
  roleId: ROLE_IDS.supervisor,
  status: 'enabled',
  scope: 'api',
  expiresAt: null,
  created: '2026-11-22T10:15:00Z',
  createdBy: '0193a6e0-1111-7000-8000-00000000000a',
  updated: '2026-11-22T10:15:00Z',
  updatedBy: '0193a6e0-1111-7000-8000-00000000000a',
}

export const ApiKeySchema = Type.Object(apiKeyFields, { examples: [apiKeyExample] })
export type ApiKey = Static<typeof ApiKeySchema>

export const NewApiKeySchema = Type.Object(
  {
    ...apiKeyFields,
    secret: Type.Optional(
      Type.String({ description: 'Shown once for an `api` key; only its hash is stored' }),
    ),
    token: Type.Optional(
      Type.String({
        description: 'Shown once for a `scim` key: send it as `Authorization: Bearer <token>` to /scim/v2',
      }),
    ),
  },
  { examples: [{ ...apiKeyExample, secret: 'JU24dw0Stexkyw8Pgu2CL_2PQ8l-b0Fu3bFCUvX4Rvo' }] },
)
export type NewApiKey = Static<typeof NewApiKeySchema>

export const CreateApiKeyBody = Body(
  {
    name: Name(),
    roleId: Uuid({ description: 'A tenant role within the caller’s effective permissions in the tenant' }),
    description: Type.Optional(Description()),
    scope: Type.Optional(ApiKeyScope),
    expiresAt: Type.Optional(Timestamp({ description: 'When the key stops working (optional)' })),
  },
  {
    examples: [
      { name: 'CRM sync', roleId: ROLE_IDS.supervisor, description: 'Nightly contact sync from the CRM' },
    ],
  },
)
export type CreateApiKeyInput = Static<typeof CreateApiKeyBody>

export const UpdateApiKeyBody = Body({ status: ApiKeyStatus }, { examples: [{ status: 'disabled' }] })
export type UpdateApiKeyInput = Static<typeof UpdateApiKeyBody>

export const ApiKeyParams = Type.Object({ tenantId: Uuid(), keyId: Uuid() })
export const ListApiKeysQuery = Type.Object({ ...PageQuery })
export type ListApiKeysQuery = Static<typeof ListApiKeysQuery>
