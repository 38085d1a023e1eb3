import { type Actor, actingUserId } from '../../access/actor.js'
import type { TenantAccess } from '../../access/effective.js'
import type { ServiceContext } from '../../context.js'
import { randomSecret, sha256 } from '../../crypto/tokens.js'
import { newId } from '../../crypto/uuid7.js'
import type { ApiKeyRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { type Page, readPage } from '../../http/pagination.js'
import { MASKED, recordAudit } from '../audit/audit.repository.js'
import { describeRole, findTenantRoleFor } from '../roles/roles.service.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import { findApiKey, insertApiKey, listApiKeys, updateApiKeyStatus } from './api-keys.repository.js'
import type {
  ApiKey,
  CreateApiKeyInput,
  ListApiKeysQuery,
  NewApiKey,
  UpdateApiKeyInput,
} from './api-keys.schemas.js'

/**
 * API keys of a tenant (API.md §4.6). Every operation needs MANAGE_ALL_APP_CREDENTIALS effective in the
 * tenant; a tenant the caller cannot see is a 404. A key acts with its tenant role in its tenant and the
 * sub-tenants only (access/effective.ts), so the role it carries must be within the caller's effective
 * permissions in that tenant — the role ceiling — both when the key is created and whenever it is changed.
 */

export function apiKeyNotFound(): AppError {
  return new AppError('api_key_not_found', 'API key not found')
}

function manageableTenant(ctx: ServiceContext, actor: Actor, tenantId: string): Promise<TenantAccess> {
  return requireTenantPermission(ctx, actor, tenantId, ['MANAGE_ALL_APP_CREDENTIALS'])
}

export async function createApiKey(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  input: CreateApiKeyInput,
): Promise<NewApiKey> {
  const access = await manageableTenant(ctx, actor, tenantId)
  const role = await findTenantRoleFor(ctx, access.tenant, input.roleId)
  checkRoleCeiling(role, access.permissions)

  const secret = randomSecret()
  const now = ctx.clock.now()
  const row: ApiKeyRow = {
    tenant_id: access.tenant.id,
    id: newId(),
    name: input.name.trim(),
    description: input.description ?? '',
    role_id: role.id,
    status: 'enabled',
    // 256 random bits: SHA-256 is enough, and cheap to check on every request (crypto/tokens.ts).
    secret_hash: sha256(secret),
    created: now,
    // Always a user: a key's creator is the default admin of tenants the key creates (access/actor.ts),
    // so a key made by a key records the user behind the first one.
    created_by: actingUserId(actor),
    updated: now,
    updated_by: actor.principalId,
  }
  await ctx.db.transaction().execute(async (tx) => {
    await insertApiKey(tx, row)
    await recordAudit(tx, ctx.clock, actor, {
      action: 'api_key.created',
      tenantId: row.tenant_id,
      target: { type: 'apiKey', id: row.id },
      changes: {
        name: [null, row.name],
        roleId: [null, row.role_id],
        status: [null, row.status],
        secret: [null, MASKED],
      },
    })
  })
  return { ...toApiKey(row), secret }
}

export async function listTenantApiKeys(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListApiKeysQuery,
): Promise<Page<ApiKey>> {
  await manageableTenant(ctx, actor, tenantId)
  return readPage(
    query,
    (window) => listApiKeys(ctx.db, tenantId, window),
    (row) => row.id,
    toApiKey,
  )
}

export async function getApiKey(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  keyId: string,
): Promise<ApiKey> {
  await manageableTenant(ctx, actor, tenantId)
  const row = await findApiKey(ctx.db, tenantId, keyId)
  if (!row) throw apiKeyNotFound()
  return toApiKey(row)
}

/** Enables or disables a key; a disabled key is refused at once (the caches are cleared). */
export async function updateApiKey(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  keyId: string,
  input: UpdateApiKeyInput,
): Promise<ApiKey> {
  const access = await manageableTenant(ctx, actor, tenantId)
  const existing = await findApiKey(ctx.db, tenantId, keyId)
  if (!existing) throw apiKeyNotFound()
  // The key's role as stated (even disabled): nobody switches on or off a key above them.
  const role = await describeRole(ctx, existing.role_id)
  checkRoleCeiling(role ?? { name: existing.role_id, permissions: [] }, access.permissions)
  const row = await ctx.db.transaction().execute(async (tx) => {
    const updated = await updateApiKeyStatus(tx, tenantId, keyId, {
      status: input.status,
      updated: ctx.clock.now(),
      updated_by: actor.principalId,
    })
    if (updated === 'stale') throw preconditionFailed()
    if (updated && updated.status !== existing.status) {
      await recordAudit(tx, ctx.clock, actor, {
        action: 'api_key.updated',
        tenantId: updated.tenant_id,
        target: { type: 'apiKey', id: updated.id },
        changes: { status: [existing.status, updated.status] },
      })
    }
    return updated
  })
  if (!row) throw apiKeyNotFound()
  ctx.access.invalidate()
  return toApiKey(row)
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    description: row.description,
    roleId: row.role_id,
    status: row.status,
    created: row.created.toISOString(),
    createdBy: row.created_by,
    updated: row.updated.toISOString(),
    updatedBy: row.updated_by,
  }
}
