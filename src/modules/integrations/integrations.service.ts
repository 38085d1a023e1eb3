import type { Updateable } from 'kysely'
import type { Actor } from '../../access/actor.js'
import type { Permission } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import { SecretDecryptionError } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import type { IntegrationRow, IntegrationsTable } from '../../db/schema.js'
import { listTenantOwnedRows } from '../../db/tenant-owned.js'
import { AppError } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { type Page, readPage } from '../../http/pagination.js'
import { type AuditRecord, auditEvent, type Changes, MASKED } from '../../outbox/audit-event.js'
import { recordAudit } from '../../outbox/audit-trail.js'
import { writeUnit } from '../../outbox/write-unit.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import {
  checkActivation,
  type NewIntegrationInput,
  readCreateBody,
  readUpdateBody,
} from './integration-input.js'
import { integrationNameKey } from './integration-name.js'
import { toIntegration, typeOf } from './integration-record.js'
import { openSecret, type StoredProperties, type StoredValue, sealProperties } from './integration-secrets.js'
import { isSecretKey } from './integration-types.js'
import {
  deleteIntegration,
  findIntegration,
  integrationInsert,
  updateIntegration,
} from './integrations.repository.js'
import type {
  CreateIntegrationBody,
  Integration,
  ListIntegrationsQuery,
  UpdateIntegrationBody,
} from './integrations.schemas.js'

const MANAGE: Permission[] = ['MANAGE_ALL_PROVIDERS']
const READ: Permission[] = ['VIEW_ALL_PROVIDERS', 'MANAGE_ALL_PROVIDERS']

function integrationNotFound(): AppError {
  return new AppError('integration_not_found', 'Integration not found')
}

/**
 * A tenant the caller cannot see is a 404 (ids do not leak); one it sees without the permission, a 403.
 * Answers the tenant id as the database spells it: secrets are bound to that exact text.
 */
async function requirePermission(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  anyOf: Permission[],
): Promise<string> {
  return (await requireTenantPermission(ctx, actor, tenantId, anyOf)).tenant.id
}

export interface CreatedIntegration {
  integration: Integration
  /** False when an identical create with the same client-chosen id was replayed. */
  created: boolean
}

/**
 * Create an integration (docs/product.md#integrations, docs/api.md#integrations). With a client-chosen `integrationId`, a repeat with
 * identical attributes answers the stored record and different attributes 409 `integration_exists`.
 * Secrets are encrypted before the database is touched; the create itself is one INSERT.
 */
export async function createIntegration(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  body: CreateIntegrationBody | undefined,
  integrationId?: string,
): Promise<CreatedIntegration> {
  const tenant = await requirePermission(ctx, actor, tenantId, MANAGE)
  const input = readCreateBody(body)
  const id = integrationId?.toLowerCase() ?? newId()
  const now = ctx.clock.now()
  const row: IntegrationRow = {
    tenant_id: tenant,
    id,
    type: input.type,
    name: input.name,
    name_key: integrationNameKey(input.name),
    description: input.description,
    active: input.active,
    properties: sealProperties(ctx.keys, input.type, tenant, id, input.properties),
    created: now,
    created_by: actor.principalId,
    updated: now,
    updated_by: actor.principalId,
  }
  try {
    const event = auditEvent(ctx.clock, actor, integrationEvent('created', row, undefined, row))
    await writeUnit(ctx).insert(
      integrationInsert({ ...row, properties: JSON.stringify(row.properties) }, event),
    )
    return { integration: toIntegration(row), created: true }
  } catch (error) {
    // The write unit answers a taken id or name as its domain error.
    if (integrationId !== undefined && error instanceof AppError) {
      // The id may be taken (a repeat, or a conflict); the name check can fire first, so look.
      const existing = await findIntegration(ctx.db, tenant, id)
      if (existing) {
        if (sameAttributes(ctx, existing, input))
          return { integration: toIntegration(existing), created: false }
        throw new AppError(
          'integration_exists',
          `An integration with id ${id} already exists in this tenant with other attributes`,
          { integrationId: 'already exists' },
        )
      }
    }
    throw error
  }
}

export async function getIntegration(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
): Promise<Integration> {
  await requirePermission(ctx, actor, tenantId, READ)
  const row = await findIntegration(ctx.db, tenantId, id)
  if (!row) throw integrationNotFound()
  return toIntegration(row)
}

export async function listTenantIntegrations(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListIntegrationsQuery,
): Promise<Page<Integration>> {
  await requirePermission(ctx, actor, tenantId, READ)
  return readPage(
    query,
    (window) => listTenantOwnedRows(ctx.db, 'integrations', tenantId, window),
    (row) => row.id,
    toIntegration,
  )
}

/**
 * Partial update: `name, description, active, properties`. Property keys are merged into the stored
 * ones (keys not sent are kept; a secret sent as "********" keeps its stored value; "" clears it).
 * New secrets are encrypted before the transaction; the transaction locks the row, merges and writes.
 */
export async function updateIntegrationById(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
  body: UpdateIntegrationBody | undefined,
): Promise<Integration> {
  const tenant = await requirePermission(ctx, actor, tenantId, MANAGE)
  const current = await findIntegration(ctx.db, tenant, id)
  if (!current) throw integrationNotFound()
  // The type never changes, so it can be read before the transaction.
  const type = typeOf(current)
  const changes = readUpdateBody(body, type)
  const sealed =
    changes.properties && sealProperties(ctx.keys, type, current.tenant_id, current.id, changes.properties)

  const set: Updateable<IntegrationsTable> & { updated: Date } = {
    updated: ctx.clock.now(),
    updated_by: actor.principalId,
  }
  if (changes.name !== undefined) {
    set.name = changes.name
    set.name_key = integrationNameKey(changes.name)
  }
  if (changes.description !== undefined) set.description = changes.description
  if (changes.active !== undefined) set.active = changes.active

  const updated = await ctx.db.transaction().execute(async (trx) => {
    const locked = await findIntegration(trx, tenant, current.id, { forUpdate: true })
    if (!locked) throw integrationNotFound()
    const merged = { ...(locked.properties as StoredProperties), ...sealed }
    checkActivation(type, changes.active ?? locked.active, merged, {
      active: changes.activePath,
      properties: changes.propertiesPath,
    })
    if (sealed) set.properties = JSON.stringify(merged)
    const after = await updateIntegration(trx, tenant, current.id, set)
    if (after === 'stale') throw preconditionFailed()
    if (after) {
      await recordAudit(trx, ctx.clock, actor, integrationEvent('updated', after, locked, after))
    }
    return after
  })
  if (!updated) throw integrationNotFound()
  return toIntegration(updated)
}

/** `DELETE …/integrations/{id}` (docs/product.md#offboarding-and-erasure): the row goes, and its encrypted secrets with it. */
export async function deleteIntegrationById(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
): Promise<void> {
  const tenant = await requirePermission(ctx, actor, tenantId, MANAGE)
  const deleted = await ctx.db.transaction().execute(async (tx) => {
    const row = await deleteIntegration(tx, tenant, id.toLowerCase())
    if (!row) return false
    await recordAudit(tx, ctx.clock, actor, integrationEvent('deleted', row, row, undefined))
    return true
  })
  if (!deleted) throw integrationNotFound()
}

/** The audit record of one change to an integration: its action and what changed between the versions. */
function integrationEvent(
  verb: 'created' | 'updated' | 'deleted',
  integration: Pick<IntegrationRow, 'tenant_id' | 'id'>,
  before: IntegrationRow | undefined,
  after: IntegrationRow | undefined,
): AuditRecord {
  return {
    action: `integration.${verb}`,
    tenantId: integration.tenant_id,
    target: { type: 'integration', id: integration.id },
    changes: integrationChanges(before, after),
  }
}

/**
 * An integration's audit changes: name, description, active and each property; a secret property shows
 * only that it was set, changed or cleared ("********"), never its value.
 */
function integrationChanges(before: IntegrationRow | undefined, after: IntegrationRow | undefined): Changes {
  const changes: Changes = {}
  for (const field of ['type', 'name', 'description', 'active'] as const) {
    const was = before?.[field] ?? null
    const now = after?.[field] ?? null
    if (was !== now) changes[field] = [was, now]
  }
  const old = (before?.properties ?? {}) as StoredProperties
  const neu = (after?.properties ?? {}) as StoredProperties
  for (const key of new Set([...Object.keys(old), ...Object.keys(neu)])) {
    const was = old[key]
    const now = neu[key]
    if (JSON.stringify(was) === JSON.stringify(now)) continue
    const secret = (value: StoredValue | undefined) =>
      value === undefined || value === '' ? (value ?? null) : typeof value === 'object' ? MASKED : value
    changes[`properties.${key}`] = [secret(was), secret(now)]
  }
  return changes
}

/** Whether a repeated create says exactly what is stored; secrets are compared by decrypting them. */
function sameAttributes(ctx: ServiceContext, row: IntegrationRow, input: NewIntegrationInput): boolean {
  if (row.type !== input.type || row.name !== input.name) return false
  if (row.description !== input.description || row.active !== input.active) return false
  const stored = row.properties as StoredProperties
  return Object.entries(input.properties).every(([key, value]) => {
    if (!isSecretKey(input.type, key)) {
      return typeof value === 'object'
        ? JSON.stringify(stored[key]) === JSON.stringify(value)
        : stored[key] === value
    }
    try {
      return openSecret(ctx.keys, row.tenant_id, row.id, key, stored[key]) === value
    } catch (error) {
      if (!(error instanceof SecretDecryptionError)) throw error
      // The stored value cannot be compared; say so (never the value) and treat it as different.
      ctx.logger.warn(
        { tenantId: row.tenant_id, integrationId: row.id, field: key, problem: error.message },
        'a stored integration secret does not decrypt',
      )
      return false
    }
  })
}

export { toIntegration } from './integration-record.js'
