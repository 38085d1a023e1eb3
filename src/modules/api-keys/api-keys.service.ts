import type { Transaction } from 'kysely'
import { type Actor, actingUserId } from '../../access/actor.js'
import type { TenantAccess } from '../../access/effective.js'
import type { ServiceContext } from '../../context.js'
import { randomSecret, sha256 } from '../../crypto/tokens.js'
import { newId } from '../../crypto/uuid7.js'
import type { ApiKeyRow, Database } from '../../db/schema.js'
import { listTenantOwnedRows } from '../../db/tenant-owned.js'
import { AppError, invalidField } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { type Page, readPage } from '../../http/pagination.js'
import { updateTenantOwnedRow } from '../../http/request-context.js'
import { MASKED, recordAudit } from '../audit/audit.repository.js'
import { requireRecentSecondFactor } from '../mfa/step-up.js'
import { describeRole, findTenantRoleFor } from '../roles/roles.service.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import { countLiveScimKeys, findApiKey, insertApiKey } from './api-keys.repository.js'
import type {
  ApiKey,
  CreateApiKeyInput,
  ListApiKeysQuery,
  NewApiKey,
  UpdateApiKeyInput,
} from './api-keys.schemas.js'

/**
 * API keys of a tenant (docs/api.md#api-keys). Every operation needs MANAGE_ALL_APP_CREDENTIALS effective in the
 * tenant; a tenant the caller cannot see is a 404. A key acts with its tenant role in its tenant and the
 * sub-tenants only (access/effective.ts), so the role it carries must be within the caller's effective
 * permissions in that tenant — the role ceiling — both when the key is created and whenever it is changed.
 */

/** At most two live SCIM keys per tenant: one in use and its replacement during a rotation (docs/scim.md). */
export const MAX_LIVE_SCIM_KEYS = 2

async function refuseThirdLiveScimKey(tx: Transaction<Database>, tenantId: string, now: Date): Promise<void> {
  // The tenant's row is locked so that two concurrent creates cannot both see one live key.
  const live = await countLiveScimKeys(tx, tenantId, now)
  if (live >= MAX_LIVE_SCIM_KEYS) {
    throw new AppError(
      'scim_key_limit',
      `This tenant already has ${MAX_LIVE_SCIM_KEYS} live SCIM keys; disable one before adding another`,
      { scope: `at most ${MAX_LIVE_SCIM_KEYS} live scim keys per tenant` },
    )
  }
}

/** The bearer token of a SCIM key: `<keyId>.<secret>` (modules/scim/scim-auth.ts reads it). */
export function scimToken(keyId: string, secret: string): string {
  return `${keyId}.${secret}`
}

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
  // A key outlives the session that made it: a step-up operation (docs/security.md, "Step-up").
  await requireRecentSecondFactor(ctx, actor)

  const secret = randomSecret()
  const now = ctx.clock.now()
  const scope = input.scope ?? 'api'
  const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt)
  if (expiresAt && Number.isNaN(expiresAt.getTime())) throw invalidField('expiresAt', 'is not a timestamp')
  if (expiresAt && expiresAt <= now) throw invalidField('expiresAt', 'must be in the future')
  const row: ApiKeyRow = {
    tenant_id: access.tenant.id,
    id: newId(),
    name: input.name.trim(),
    description: input.description ?? '',
    role_id: role.id,
    status: 'enabled',
    scope,
    expires_at: expiresAt,
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
    if (scope === 'scim') await refuseThirdLiveScimKey(tx, row.tenant_id, now)
    await insertApiKey(tx, row)
    await recordAudit(tx, ctx.clock, actor, {
      action: 'api_key.created',
      tenantId: row.tenant_id,
      target: { type: 'apiKey', id: row.id },
      changes: {
        name: [null, row.name],
        roleId: [null, row.role_id],
        status: [null, row.status],
        scope: [null, row.scope],
        secret: [null, MASKED],
      },
    })
  })
  // A SCIM directory is given one opaque bearer token: the key id and the secret together.
  return scope === 'scim'
    ? { ...toApiKey(row), token: scimToken(row.id, secret) }
    : { ...toApiKey(row), secret }
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
    (window) => listTenantOwnedRows(ctx.db, 'api_keys', tenantId, window),
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
    if (existing.scope === 'scim' && existing.status === 'disabled' && input.status === 'enabled') {
      await refuseThirdLiveScimKey(tx, tenantId, ctx.clock.now())
    }
    const updated = await updateTenantOwnedRow(tx, 'api_keys', tenantId, keyId, {
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
    scope: row.scope,
    expiresAt: row.expires_at?.toISOString() ?? null,
    created: row.created.toISOString(),
    createdBy: row.created_by,
    updated: row.updated.toISOString(),
    updatedBy: row.updated_by,
  }
}
