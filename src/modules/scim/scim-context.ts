import type { ApiKeyActor } from '../../access/actor.js'
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

/** Reads need VIEW_ALL_USERS or MANAGE_ALL_USERS, writes MANAGE_TENANT_ENROLLMENT (API.md §16). */
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
