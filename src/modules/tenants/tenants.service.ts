import { type Actor, actingUserId } from '../../access/actor.js'
import { canSee } from '../../access/effective.js'
import type { EffectiveMfaPolicy } from '../../access/mfa-policy.js'
import type { Permission } from '../../access/permissions.js'
import type { ServiceContext } from '../../context.js'
import { newId } from '../../crypto/uuid7.js'
import type { TenantRow, TenantUpdate } from '../../db/schema.js'
import { AppError, invalidField } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { type Page, readPage } from '../../http/pagination.js'
import { auditEvent, changesBetween } from '../../outbox/audit-event.js'
import { recordAudit } from '../../outbox/audit-trail.js'
import { writeUnit } from '../../outbox/write-unit.js'
import type { StepUpGuard } from '../mfa-policy/step-up-guard.js'
import { isTimezone } from '../regions/timezones.js'
import { checkDefaultIdentityProvider } from './default-provider.js'
import {
  changesGuardedMfa,
  mfaChanges,
  mfaColumnsOnCreate,
  mfaSince,
  newTenantMfaPolicy,
  toMfaPolicyEffective,
} from './tenant-mfa.js'
import { displayName, tenantNameKey } from './tenant-name.js'
import {
  findTenant,
  listTenants,
  type TenantRecordRow,
  tenantInsert,
  updateTenant,
} from './tenants.repository.js'
import type { CreateTenantInput, ListTenantsQuery, Tenant, UpdateTenantInput } from './tenants.schemas.js'

export function tenantNotFound(): AppError {
  return new AppError('tenant_not_found', 'Tenant not found')
}

function permissionDenied(permission: Permission, where: string): AppError {
  return new AppError('permission_denied', `${permission} is required ${where}`)
}

function checkTimezone(timezone: string | undefined): void {
  if (timezone !== undefined && !isTimezone(timezone)) {
    throw invalidField('timezone', 'must be an IANA time zone such as America/New_York')
  }
}

/** Create a tenant (docs/product.md#the-tenant-tree, docs/api.md#tenants). */
export async function createTenant(
  ctx: ServiceContext,
  actor: Actor,
  input: CreateTenantInput,
): Promise<Tenant> {
  checkTimezone(input.timezone)
  const parent = await parentFor(ctx, actor, input.parentId)
  const now = ctx.clock.now()
  const name = displayName(input.name)
  const row: TenantRow = {
    id: newId(),
    name,
    name_key: tenantNameKey(name),
    description: input.description ?? '',
    region_id: input.regionId,
    parent_id: parent.id,
    parent_ids: [...parent.parentIds, parent.id],
    admin_user_id: input.adminUserId ?? actingUserId(actor),
    active: input.active ?? true,
    timezone: input.timezone ?? 'UTC',
    default_identity_provider: null,
    cxengage_identity_provider: 'enabled',
    client_log_level: null,
    outbound_integration_id: null,
    capacity_rule_id: null,
    ...mfaColumnsOnCreate(input, now),
    created: now,
    created_by: actor.principalId,
    updated: now,
    updated_by: actor.principalId,
  }
  const event = auditEvent(ctx.clock, actor, {
    action: 'tenant.created',
    tenantId: row.id,
    target: { type: 'tenant', id: row.id },
    changes: changesBetween(undefined, tenantSettings(row), TENANT_AUDIT_FIELDS),
  })
  await writeUnit(ctx).insert(tenantInsert(row, event))
  // A new tenant has no children; its parent's childIds is derived, so it lists the new id already.
  const tenant = toTenant({ ...row, parent_name: parent.name, child_ids: [] }, ctx)
  return { ...tenant, mfaPolicyEffective: toMfaPolicyEffective(newTenantMfaPolicy(row, parent.mfa)) }
}

/**
 * The parent a new tenant goes under, where the caller holds MANAGE_TENANT: the platform (no parentId, or
 * the platform's id — what a root tenant reports as its parent, docs/api.md "Tenants") needs it in the
 * platform role.
 */
async function parentFor(
  ctx: ServiceContext,
  actor: Actor,
  parentId: string | null | undefined,
): Promise<{ id: string; name: string; parentIds: string[]; mfa?: EffectiveMfaPolicy }> {
  if (parentId === undefined || parentId === null || parentId.toLowerCase() === ctx.platform.id) {
    if (actor.kind !== 'user' || !actor.platformPermissions.has('MANAGE_TENANT')) {
      throw permissionDenied('MANAGE_TENANT', 'in the platform role to create a root tenant')
    }
    return { id: ctx.platform.id, name: ctx.platform.name, parentIds: [] }
  }
  const access = await ctx.access.inTenant(actor, parentId)
  // A parent the caller cannot see is reported like a missing one: ids do not leak.
  if (!canSee(access)) throw invalidField('parentId', 'does not exist', 'parentId does not name a tenant')
  if (!access.permissions.has('MANAGE_TENANT'))
    throw permissionDenied('MANAGE_TENANT', 'in the parent tenant')
  return access.tenant
}

export async function getTenant(ctx: ServiceContext, actor: Actor, tenantId: string): Promise<Tenant> {
  const access = await ctx.access.inTenant(actor, tenantId)
  if (!canSee(access)) throw tenantNotFound()
  const row = await findTenant(ctx.db, tenantId)
  if (!row) throw tenantNotFound()
  // The effective policy came with the access check (the tenant's placement): no read of its own.
  return { ...toTenant(row, ctx), mfaPolicyEffective: toMfaPolicyEffective(access.tenant.mfa) }
}

/** The tenants the caller can read: all of them with a platform permission, else its subtrees. */
export async function listVisibleTenants(
  ctx: ServiceContext,
  actor: Actor,
  query: ListTenantsQuery,
): Promise<Page<Tenant>> {
  let subtreesOf: string[] | undefined
  if (actor.kind === 'api_key') subtreesOf = [actor.tenantId]
  else if (actor.platformPermissions.size === 0) {
    subtreesOf = (await ctx.access.grantingMemberships(actor)).map((m) => m.tenantId)
  }
  return readPage(
    query,
    (window) =>
      listTenants(ctx.db, { regionId: query.regionId, parentId: query.parentId, subtreesOf, ...window }),
    (row) => row.id,
    (row) => toTenant(row, ctx),
  )
}

export async function updateTenantById(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  input: UpdateTenantInput,
  requireStepUp: StepUpGuard,
): Promise<Tenant> {
  const access = await ctx.access.inTenant(actor, tenantId)
  if (!canSee(access)) throw tenantNotFound()
  if (!access.permissions.has('MANAGE_TENANT')) throw permissionDenied('MANAGE_TENANT', 'in this tenant')
  checkTimezone(input.timezone)
  await checkDefaultIdentityProvider(ctx.db, tenantId, input.defaultIdentityProvider)
  if (await changesGuardedFields(ctx, tenantId, input)) await requireStepUp(ctx, actor)

  const now = ctx.clock.now()
  const changes: TenantUpdate = { ...tenantChanges(input), updated: now, updated_by: actor.principalId }
  const updated = await ctx.db.transaction().execute(async (tx) => {
    const before = await findTenant(tx, tenantId)
    if (before) Object.assign(changes, mfaSince(before, changes, now))
    const outcome = await updateTenant(tx, tenantId, changes)
    if (!before || outcome !== 'updated') return outcome
    await recordAudit(tx, ctx.clock, actor, {
      action: 'tenant.updated',
      tenantId,
      target: { type: 'tenant', id: tenantId },
      changes: changesBetween(
        tenantSettings(before),
        tenantSettings({ ...before, ...changes }),
        TENANT_AUDIT_FIELDS,
      ),
    })
    return outcome
  })
  if (updated === 'missing') throw tenantNotFound()
  if (updated === 'stale') throw preconditionFailed()
  // `active`, the name and the second-factor policy feed permission look-ups and parent names.
  ctx.access.invalidate()
  // Read without a second access check: the change may have just taken the caller's password access
  // away here (cxengageIdentityProvider "denied"), and the change did happen.
  const row = await findTenant(ctx.db, tenantId)
  const placement = await ctx.access.tenantPlacement(tenantId)
  if (!row || !placement) throw tenantNotFound()
  return { ...toTenant(row, ctx), mfaPolicyEffective: toMfaPolicyEffective(placement.mfa) }
}

/** The columns a PUT changes: the fields it carries, under their column names. */
function tenantChanges(input: UpdateTenantInput): TenantUpdate {
  const changes: TenantUpdate = mfaChanges(input)
  if (input.name !== undefined) {
    changes.name = displayName(input.name)
    changes.name_key = tenantNameKey(input.name)
  }
  if (input.description !== undefined) changes.description = input.description ?? ''
  if (input.active !== undefined) changes.active = input.active
  if (input.adminUserId !== undefined) changes.admin_user_id = input.adminUserId
  if (input.timezone !== undefined) changes.timezone = input.timezone
  if (input.cxengageIdentityProvider !== undefined)
    changes.cxengage_identity_provider = input.cxengageIdentityProvider
  if (input.defaultIdentityProvider !== undefined)
    changes.default_identity_provider = input.defaultIdentityProvider?.toLowerCase() ?? null
  if (input.outboundIntegrationId !== undefined) changes.outbound_integration_id = input.outboundIntegrationId
  if (input.clientLogLevel !== undefined) changes.client_log_level = input.clientLogLevel
  return changes
}

/**
 * Changing the second-factor policy or the trust in identity providers is a step-up operation
 * (docs/security.md, "Step-up"): asked only when the PUT changes one of them, not when it sends them back
 * unchanged.
 */
async function changesGuardedFields(
  ctx: ServiceContext,
  tenantId: string,
  input: UpdateTenantInput,
): Promise<boolean> {
  if (input.mfaPolicy === undefined && input.mfaAcceptIdp === undefined) return false
  const before = await findTenant(ctx.db, tenantId)
  return before !== undefined && changesGuardedMfa(before, input)
}

const TENANT_AUDIT_FIELDS = [
  'name',
  'description',
  'regionId',
  'parentId',
  'adminUserId',
  'active',
  'timezone',
  'defaultIdentityProvider',
  'cxengageIdentityProvider',
  'clientLogLevel',
  'outboundIntegrationId',
  'mfaPolicy',
  'mfaGraceDays',
  'mfaAcceptIdp',
] as const

/**
 * A tenant's settings under the names the API gives them: the one mapping its record (toTenant) and its
 * audit events share, so an event names a field as the API does.
 */
function tenantSettings(row: TenantRow) {
  return {
    name: row.name,
    description: row.description,
    regionId: row.region_id,
    parentId: row.parent_id,
    adminUserId: row.admin_user_id,
    active: row.active,
    timezone: row.timezone,
    defaultIdentityProvider: row.default_identity_provider,
    cxengageIdentityProvider: row.cxengage_identity_provider,
    clientLogLevel: row.client_log_level,
    outboundIntegrationId: row.outbound_integration_id,
    mfaPolicy: row.mfa_policy,
    mfaGraceDays: row.mfa_grace_days,
    mfaAcceptIdp: row.mfa_accept_idp,
  }
}

function iso(date: Date): string {
  return date.toISOString()
}

export function toTenant(row: TenantRecordRow, ctx: Pick<ServiceContext, 'platform'>): Tenant {
  return {
    id: row.id,
    ...tenantSettings(row),
    parentIds: row.parent_ids,
    parent: { id: row.parent_id, name: row.parent_name ?? ctx.platform.name },
    childIds: row.child_ids,
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    created: iso(row.created),
    updated: iso(row.updated),
    capacityRuleId: row.capacity_rule_id,
  }
}
