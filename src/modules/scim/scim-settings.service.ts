import type { Actor, ApiKeyActor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { ifMatchIsStale } from '../../http/request-context.js'
import { recordAudit } from '../audit/audit.repository.js'
import { findTenantRoleFor } from '../roles/roles.service.js'
import { checkRoleCeiling, requireTenantPermission } from '../tenants/tenant-access.js'
import {
  findGroup,
  groupMembers,
  listGroups,
  type ScimGroupRow,
  saveSettings,
  updateGroup,
} from './scim.repository.js'
import { defaultRoleId, forgetDefaultRole, scimBaseUrl } from './scim-context.js'
import { applyRoles, planRoles } from './scim-roles.js'
import type {
  ScimGroupMapping,
  ScimSettings,
  UpdateScimGroupInput,
  UpdateScimSettingsInput,
} from './scim-settings.schemas.js'

/** Settings and the group → role mapping (docs/scim.md): MANAGE_TENANT_ENROLLMENT, ceiling on the role. */

const ENROLMENT = ['MANAGE_TENANT_ENROLLMENT'] as const

export async function getScimSettings(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
): Promise<ScimSettings> {
  const access = await requireTenantPermission(ctx, actor, tenantId, ENROLMENT)
  return {
    tenantId: access.tenant.id,
    defaultRoleId: await defaultRoleId({ ctx, tenantId: access.tenant.id }),
    baseUrl: scimBaseUrl(ctx.config.publicUrl, access.tenant.id),
  }
}

export async function updateScimSettings(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  input: UpdateScimSettingsInput,
): Promise<ScimSettings> {
  const access = await requireTenantPermission(ctx, actor, tenantId, ENROLMENT)
  const role = await findTenantRoleFor(ctx, access.tenant, input.defaultRoleId)
  checkRoleCeiling(role, access.permissions, 'defaultRoleId')
  const before = await defaultRoleId({ ctx, tenantId: access.tenant.id })
  if (before !== role.id) {
    await ctx.db.transaction().execute(async (tx) => {
      await saveSettings(tx, {
        tenant_id: access.tenant.id,
        default_role_id: role.id,
        updated: ctx.clock.now(),
        updated_by: actor.principalId,
      })
      await recordAudit(tx, ctx.clock, actor, {
        action: 'scim_settings.updated',
        tenantId: access.tenant.id,
        target: { type: 'tenant', id: access.tenant.id },
        changes: { defaultRoleId: [before, role.id] },
      })
    })
    forgetDefaultRole(ctx, access.tenant.id)
  }
  return getScimSettings(ctx, actor, tenantId)
}

function toMapping(row: ScimGroupRow, members: number): ScimGroupMapping {
  return {
    id: row.id,
    displayName: row.display_name,
    externalId: row.external_id,
    roleId: row.role_id,
    priority: row.priority,
    members,
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
  }
}

export async function listScimGroupMappings(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
): Promise<ScimGroupMapping[]> {
  const access = await requireTenantPermission(ctx, actor, tenantId, ENROLMENT)
  const rows = await listGroups(ctx.db, access.tenant.id)
  const members = await groupMembers(ctx.db, access.tenant.id)
  return rows.map((row) => toMapping(row, members.get(row.id)?.length ?? 0))
}

/**
 * Maps a group to a role (or unmaps it) and sets its priority; the members' roles follow at once. Every
 * role that would be assigned is within the caller's ceiling, or nothing changes (403).
 */
export async function updateScimGroupMapping(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  groupId: string,
  input: UpdateScimGroupInput,
): Promise<ScimGroupMapping> {
  const access = await requireTenantPermission(ctx, actor, tenantId, ENROLMENT)
  const row = await findGroup(ctx.db, access.tenant.id, groupId.toLowerCase())
  if (!row) throw new AppError('not_found', 'SCIM group not found')
  if (ifMatchIsStale('scim_groups', row.updated)) throw preconditionFailed()
  let roleId: string | null = null
  if (input.roleId !== null) {
    const role = await findTenantRoleFor(ctx, access.tenant, input.roleId)
    checkRoleCeiling(role, access.permissions)
    roleId = role.id
  }
  const priority = input.priority ?? row.priority
  const members = (await groupMembers(ctx.db, access.tenant.id, [row.id])).get(row.id) ?? []
  const call = { ctx, tenantId: access.tenant.id }
  const changes = await planRoles(call, access, members, undefined, { groupId: row.id, roleId, priority })
  await ctx.db.transaction().execute(async (tx) => {
    await updateGroup(tx, access.tenant.id, row.id, { role_id: roleId, priority, updated: ctx.clock.now() })
    await recordAudit(tx, ctx.clock, actor, {
      action: 'scim_group.updated',
      tenantId: access.tenant.id,
      target: { type: 'scimGroup', id: row.id },
      changes: { roleId: [row.role_id, roleId], priority: [row.priority, priority] },
    })
  })
  await applyRoles({ ctx, actor: actor as ApiKeyActor, tenantId: access.tenant.id, baseUrl: '' }, changes)
  const updated = (await findGroup(ctx.db, access.tenant.id, row.id)) as ScimGroupRow
  return toMapping(updated, members.length)
}
