import type { Permission, RoleScope } from './permissions.js'

/**
 * The roles a rule can check an id against without I/O: every role that is not owned by one tenant —
 * the platform roles and the built-in tenant roles. Loaded once and cached briefly (roles.service.ts, on the context)
 * so that the per-row rules of single and bulk creates stay synchronous and cheap.
 */
export interface CatalogRole {
  id: string
  scope: RoleScope
  name: string
  permissions: ReadonlySet<Permission>
}

export type RoleCatalog = ReadonlyMap<string, CatalogRole>
