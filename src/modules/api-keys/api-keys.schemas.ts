import { type Static, Type } from 'typebox'
import { API_KEY_STATUSES } from '../../db/schema.js'
import { Body, Description, Name, PageQuery, Timestamp, Uuid } from '../../http/schemas.js'

/** API key shapes (API.md §4.6). The secret appears only in the create response, once. */

const ApiKeyStatus = Type.Enum(API_KEY_STATUSES, { type: 'string' })

const apiKeyFields = {
  id: Uuid({ description: 'Also the username of `Basic keyId:secret` and of POST /v1/tokens' }),
  tenantId: Uuid(),
  name: Type.String(),
  description: Type.String(),
  roleId: Uuid({ description: 'A tenant role; the key acts with it in its tenant and the sub-tenants' }),
  status: Type.String({ description: API_KEY_STATUSES.join(' | ') }),
  created: Timestamp(),
  createdBy: Uuid({ description: 'The user on whose authority the key was created' }),
  updated: Timestamp(),
  updatedBy: Uuid(),
}

export const ApiKeySchema = Type.Object(apiKeyFields)
export type ApiKey = Static<typeof ApiKeySchema>

export const NewApiKeySchema = Type.Object({
  ...apiKeyFields,
  secret: Type.String({ description: 'Shown once; only its hash is stored' }),
})
export type NewApiKey = Static<typeof NewApiKeySchema>

export const CreateApiKeyBody = Body({
  name: Name(),
  roleId: Uuid({ description: 'A tenant role within the caller’s effective permissions in the tenant' }),
  description: Type.Optional(Description()),
})
export type CreateApiKeyInput = Static<typeof CreateApiKeyBody>

export const UpdateApiKeyBody = Body({ status: ApiKeyStatus })
export type UpdateApiKeyInput = Static<typeof UpdateApiKeyBody>

export const ApiKeyParams = Type.Object({ tenantId: Uuid(), keyId: Uuid() })
export const ListApiKeysQuery = Type.Object({ ...PageQuery })
export type ListApiKeysQuery = Static<typeof ListApiKeysQuery>
