import type { ApiKeyActor } from '../../access/actor.js'
import { TtlCache } from '../../access/cache.js'
import type { AccessControl } from '../../access/effective.js'
import { ROLE_IDS } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import { findSettings } from './scim.repository.js'

/** What every SCIM operation works with: the service context, the SCIM key, its tenant and base URL. */
export interface ScimCall {
  ctx: ServiceContext
  actor: ApiKeyActor
  tenantId: string
  baseUrl: string
}

export const READ = ['VIEW_ALL_USERS', 'MANAGE_ALL_USERS'] as const
export const WRITE = ['MANAGE_TENANT_ENROLLMENT'] as const

/** Reads need VIEW_ALL_USERS or MANAGE_ALL_USERS, writes MANAGE_TENANT_ENROLLMENT (docs/scim.md). */
export async function requireScim(call: ScimCall, write: boolean) {
  return requireTenantPermission(call.ctx, call.actor, call.tenantId, write ? WRITE : READ)
}

export function scimBaseUrl(publicUrl: string, tenantId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/scim/v2/tenants/${tenantId}`
}

/** The role a SCIM-made member gets when no mapped group decides: the tenant's setting, else Agent. */
export async function defaultRoleId(call: Pick<ScimCall, 'ctx' | 'tenantId'>): Promise<string> {
  return (await findSettings(call.ctx.db, call.tenantId))?.default_role_id ?? ROLE_IDS.agent
}

const DEFAULT_ROLE_TTL_MS = 5_000

/** The cache of one application's default roles (buildApp puts it on the context). */
export function createScimDefaultRoleCache(access: AccessControl): TtlCache<string, string> {
  const cache = new TtlCache<string, string>(DEFAULT_ROLE_TTL_MS)
  access.onInvalidate(() => cache.clear())
  return cache
}

/**
 * defaultRoleId for a create, from a cache of a few seconds: an initial sync creates thousands of users
 * in a row, and the read would be one statement of each (docs/performance.md, "SCIM creates and reads").
 * A change of the setting in this process clears it (forgetDefaultRole); one in another process is seen
 * within the TTL, as a role change is. The role itself is still checked on every create.
 */
export async function provisioningRoleId(call: Pick<ScimCall, 'ctx' | 'tenantId'>): Promise<string> {
  return call.ctx.scimDefaultRoles.getOrLoad(call.tenantId, () => defaultRoleId(call))
}

export function forgetDefaultRole(ctx: ServiceContext, tenantId: string): void {
  ctx.scimDefaultRoles.delete(tenantId)
}
