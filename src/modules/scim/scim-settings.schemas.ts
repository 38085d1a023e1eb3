import { type Static, Type } from 'typebox'
import { ROLE_IDS } from '../../access/permissions.js'
import { Body, Nullable, Timestamp, Uuid } from '../../http/schemas.js'

/** The /v1 side of SCIM (docs/scim.md): a tenant's settings and its groups' role mapping. */

export const ScimSettingsSchema = Type.Object(
  {
    tenantId: Uuid(),
    defaultRoleId: Uuid({
      description: 'The role of a SCIM-made member no mapped group decides (default: Agent)',
    }),
    baseUrl: Type.String({ description: 'Read-only: the SCIM endpoint to give the directory' }),
  },
  {
    examples: [
      {
        tenantId: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
        defaultRoleId: ROLE_IDS.agent,
        baseUrl: 'https://tenantry.example.com/scim/v2/tenants/0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
      },
    ],
  },
)
export type ScimSettings = Static<typeof ScimSettingsSchema>

export const UpdateScimSettingsBody = Body(
  { defaultRoleId: Uuid({ description: 'A tenant role within the caller’s permissions' }) },
  { examples: [{ defaultRoleId: ROLE_IDS.agent }] },
)
export type UpdateScimSettingsInput = Static<typeof UpdateScimSettingsBody>

export const ScimGroupMappingSchema = Type.Object({
  id: Uuid(),
  displayName: Type.String(),
  externalId: Nullable(Type.String()),
  roleId: Nullable(Uuid({ description: 'The tenant role its members get; null: not mapped' })),
  priority: Type.Integer({ description: 'The lowest priority among a member’s mapped groups decides' }),
  members: Type.Integer({ description: 'How many members it has' }),
  created: Timestamp(),
  updated: Timestamp(),
})
export type ScimGroupMapping = Static<typeof ScimGroupMappingSchema>

export const UpdateScimGroupBody = Body(
  {
    roleId: Nullable(Uuid({ description: 'A tenant role within the caller’s permissions, or null' })),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  { examples: [{ roleId: ROLE_IDS.supervisor, priority: 10 }] },
)
export type UpdateScimGroupInput = Static<typeof UpdateScimGroupBody>

export const ScimGroupParams = Type.Object({ tenantId: Uuid(), groupId: Uuid() })
