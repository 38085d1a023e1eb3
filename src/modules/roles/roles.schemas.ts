import { type Static, Type } from 'typebox'
import { PERMISSION_IDS, PERMISSIONS } from '../../access/permissions.js'
import { Body, Description, Name, Nullable, PageQuery, Timestamp, Uuid } from '../../http/schemas.js'

/** Role and permission shapes (docs/product.md#permissions, docs/api.md#permissions-and-roles, docs/api.md#tenant-roles). */

export const PermissionName = Type.Enum(PERMISSIONS, { type: 'string' })

export const PermissionSchema = Type.Object({
  id: Uuid({ description: 'The permission’s fixed id, the same in every installation' }),
  name: PermissionName,
  description: Type.String(),
})
export type PermissionRecord = Static<typeof PermissionSchema>

export const RoleSchema = Type.Object({
  id: Uuid(),
  tenantId: Nullable(Uuid({ description: 'The owning tenant; null for platform and built-in roles' })),
  name: Type.String(),
  description: Type.String(),
  permissions: Type.Array(Uuid(), { description: 'Permission ids (GET /v1/permissions), catalogue order' }),
  active: Type.Boolean({ description: 'A disabled role grants nothing and cannot be assigned' }),
  shared: Type.Boolean({ description: 'Assignable in the owning tenant’s sub-tenants too' }),
  builtIn: Type.Boolean({ description: 'Built-in roles are read-only' }),
  created: Timestamp(),
  createdBy: Nullable(Uuid()),
  updated: Timestamp(),
  updatedBy: Nullable(Uuid()),
})
export type Role = Static<typeof RoleSchema>

/** A permission as a request names it: its id (any case) or its name. */
const PermissionRef = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'A permission id or name',
})
const PermissionRefs = Type.Array(PermissionRef, {
  maxItems: 100,
  description: 'Permissions by id or name; repeats collapse',
})

const roleName = 'Unique within the tenant, ignoring case, width and repeated spaces'

export const CreateRoleBody = Body(
  {
    name: Name({ description: roleName }),
    description: Type.Optional(Nullable(Description())),
    permissions: PermissionRefs,
    active: Type.Optional(Type.Boolean({ description: 'Default true' })),
    shared: Type.Optional(Type.Boolean({ description: 'Default false' })),
  },
  {
    examples: [
      {
        name: 'QA reviewer',
        description: 'Reads users and integrations to review interactions',
        permissions: ['VIEW_ALL_USERS', PERMISSION_IDS.VIEW_ALL_PROVIDERS],
        shared: true,
      },
    ],
  },
)
export type CreateRoleInput = Static<typeof CreateRoleBody>

export const UpdateRoleBody = Body(
  {
    name: Type.Optional(Name({ description: roleName })),
    description: Type.Optional(Nullable(Description())),
    permissions: Type.Optional(PermissionRefs),
    active: Type.Optional(Type.Boolean()),
    shared: Type.Optional(Type.Boolean()),
  },
  {
    examples: [{ permissions: ['VIEW_ALL_USERS', 'VIEW_ALL_PROVIDERS', 'VIEW_ALL_ROLES'], active: true }],
  },
)
export type UpdateRoleInput = Static<typeof UpdateRoleBody>

export const RoleParams = Type.Object({ roleId: Uuid() })
export const TenantRoleParams = Type.Object({ tenantId: Uuid(), roleId: Uuid() })
export const ListRolesQuery = Type.Object({ ...PageQuery })
export type ListRolesQuery = Static<typeof ListRolesQuery>
