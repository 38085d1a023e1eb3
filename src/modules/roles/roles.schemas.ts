import { type Static, Type } from 'typebox'
import { PERMISSIONS } from '../../access/permissions.js'
import { Nullable, PageQuery, Timestamp, Uuid } from '../../http/schemas.js'

/** Role and permission shapes (API.md §3, §4.6). */

export const PermissionName = Type.Enum(PERMISSIONS, { type: 'string' })

export const PermissionSchema = Type.Object({
  name: PermissionName,
  description: Type.String(),
})
export type PermissionRecord = Static<typeof PermissionSchema>

export const RoleSchema = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Type.String(),
  permissions: Type.Array(PermissionName),
  tenantId: Nullable(Uuid({ description: 'The owning tenant; null for platform and built-in roles' })),
  builtIn: Type.Boolean(),
  created: Timestamp(),
  createdBy: Nullable(Uuid()),
  updated: Timestamp(),
  updatedBy: Nullable(Uuid()),
})
export type Role = Static<typeof RoleSchema>

export const RoleParams = Type.Object({ roleId: Uuid() })
export const ListRolesQuery = Type.Object({ ...PageQuery })
export type ListRolesQuery = Static<typeof ListRolesQuery>
