import { newId } from '../../crypto/uuid7.js'
import { recordAudit } from '../audit/audit.repository.js'
import { memberRoleIds } from '../memberships/memberships.service.js'
import {
  bumpScimUserVersion,
  deleteGroup,
  findGroup,
  findGroupsBy,
  groupMembers,
  insertGroup,
  listGroups,
  type ScimGroupRow,
  setGroupMembers,
  updateGroup,
} from './scim.repository.js'
import { GROUP_RESOURCE } from './scim-attributes.js'
import { requireScim, type ScimCall } from './scim-context.js'
import { invalidValue, scimNotFound, uniqueness } from './scim-error.js'
import { type Filter, matches } from './scim-filter.js'
import type { Patchable } from './scim-patch.js'
import { groupVersion, type Resource, toScimGroup } from './scim-resources.js'
import { applyRoles, planRoles } from './scim-roles.js'
import type { Stored } from './scim-values.js'

/**
 * SCIM Groups (docs/scim.md): provisioning groups of this tenant, `{displayName, externalId, members}`.
 * A member must be a user of this tenant. Changing a group's members may change their roles (the
 * mapping, scim-roles.ts): those changes are planned and checked against the key's ceiling first.
 */

export const GROUP_FILTER_PATHS = new Set([
  'id',
  'displayname',
  'externalid',
  'members.value',
  'members[value]',
])
const CASE_EXACT = new Set(['id', 'externalid', 'members.value', 'members[value]'])
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export { GROUP_RESOURCE }

async function loadGroup(call: ScimCall, id: string): Promise<ScimGroupRow> {
  const row = UUID.test(id) ? await findGroup(call.ctx.db, call.tenantId, id.toLowerCase()) : undefined
  if (!row) throw scimNotFound('Group')
  return row
}

export async function getScimGroup(call: ScimCall, id: string): Promise<Resource> {
  await requireScim(call, false)
  const row = await loadGroup(call, id)
  const members = (await groupMembers(call.ctx.db, call.tenantId, [row.id])).get(row.id) ?? []
  return toScimGroup(row, members, call.baseUrl)
}

export async function scimGroupVersion(call: ScimCall, id: string): Promise<string> {
  return groupVersion(await loadGroup(call, id))
}

function displayNameOf(stored: Stored): string {
  const name = typeof stored.displayName === 'string' ? stored.displayName.trim() : ''
  if (name === '') throw invalidValue('displayName is required')
  if (name.length > 255) throw invalidValue('displayName is longer than 255 characters')
  return name
}

/**
 * The member ids of a stored group, each checked to be a user of this tenant (400 invalidValue): read a
 * thousand at a time (memberRoleIds), never one read per member.
 */
async function memberIds(call: ScimCall, stored: Stored): Promise<Set<string>> {
  const ids = new Set<string>()
  for (const member of (stored.members as { value?: string }[] | undefined) ?? []) {
    const id = (member.value ?? '').toLowerCase()
    if (!UUID.test(id)) throw invalidValue(`members: "${member.value ?? ''}" is not a user of this tenant`)
    ids.add(id)
  }
  if (ids.size > 10_000) throw invalidValue('A group holds at most 10000 members')
  const members = await memberRoleIds(call.ctx, call.tenantId, [...ids])
  for (const id of ids) {
    if (!members.has(id)) throw invalidValue(`members: "${id}" is not a user of this tenant`)
  }
  return ids
}

async function checkUniqueName(call: ScimCall, name: string, self?: string): Promise<void> {
  const found = await findGroupsBy(call.ctx.db, call.tenantId, { displayNameKey: name.toLowerCase() })
  if (found.some((g) => g.id !== self)) throw uniqueness(`A group named "${name}" already exists`)
}

export async function createScimGroup(call: ScimCall, input: Patchable): Promise<Resource> {
  const access = await requireScim(call, true)
  const displayName = displayNameOf(input.stored)
  await checkUniqueName(call, displayName)
  const members = await memberIds(call, input.stored)
  const now = call.ctx.clock.now()
  const row: ScimGroupRow = {
    tenant_id: call.tenantId,
    id: newId(),
    display_name: displayName,
    display_name_key: displayName.toLowerCase(),
    external_id: (input.stored.externalId as string | undefined) ?? null,
    role_id: null,
    priority: 100,
    created: now,
    updated: now,
    version: 1,
  }
  // A new group is mapped to no role, so it changes nobody's role; planned anyway for the ceiling.
  await planRoles(call, access, [...members], { groupId: row.id, members })
  // A name taken meanwhile fails the group's key: 409 uniqueness (scim.repository.ts).
  await call.ctx.db.transaction().execute(async (tx) => {
    await insertGroup(tx, row)
    await setGroupMembers(tx, call.tenantId, row.id, [...members], [])
    await bumpScimUserVersion(tx, call.tenantId, [...members])
    await recordAudit(tx, call.ctx.clock, call.actor, {
      action: 'scim_group.created',
      tenantId: call.tenantId,
      target: { type: 'scimGroup', id: row.id },
      changes: { displayName: [null, displayName], members: [null, [...members]] },
    })
  })
  return getScimGroup(call, row.id)
}

/** A group's current state as PATCH and PUT start from it. */
export async function currentGroup(
  call: ScimCall,
  id: string,
): Promise<{ row: ScimGroupRow; patchable: Patchable }> {
  await requireScim(call, true)
  const row = await loadGroup(call, id)
  const members = (await groupMembers(call.ctx.db, call.tenantId, [row.id])).get(row.id) ?? []
  const stored: Stored = {
    displayName: row.display_name,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    ...(members.length > 0 ? { members: members.map((value) => ({ value })) } : {}),
  }
  return { row, patchable: { stored, active: undefined } }
}

/** Stores a group's next state (PUT, PATCH): name, externalId, members, then the roles that follow. */
export async function writeScimGroup(call: ScimCall, row: ScimGroupRow, next: Patchable): Promise<void> {
  const access = await requireScim(call, true)
  const displayName = displayNameOf(next.stored)
  await checkUniqueName(call, displayName, row.id)
  const members = await memberIds(call, next.stored)
  const before = new Set((await groupMembers(call.ctx.db, call.tenantId, [row.id])).get(row.id) ?? [])
  const added = [...members].filter((id) => !before.has(id))
  const removed = [...before].filter((id) => !members.has(id))
  const roleChanges = await planRoles(call, access, [...added, ...removed], { groupId: row.id, members })
  const externalId = (next.stored.externalId as string | undefined) ?? null
  const changes: Record<string, [unknown, unknown]> = {}
  if (displayName !== row.display_name) changes.displayName = [row.display_name, displayName]
  if (externalId !== row.external_id) changes.externalId = [row.external_id, externalId]
  if (added.length > 0) changes.membersAdded = [null, added]
  if (removed.length > 0) changes.membersRemoved = [removed, null]
  if (Object.keys(changes).length === 0) return
  await call.ctx.db.transaction().execute(async (tx) => {
    await updateGroup(tx, call.tenantId, row.id, {
      display_name: displayName,
      display_name_key: displayName.toLowerCase(),
      external_id: externalId,
      updated: call.ctx.clock.now(),
    })
    await setGroupMembers(tx, call.tenantId, row.id, added, removed)
    await bumpScimUserVersion(tx, call.tenantId, [...added, ...removed])
    await recordAudit(tx, call.ctx.clock, call.actor, {
      action: 'scim_group.updated',
      tenantId: call.tenantId,
      target: { type: 'scimGroup', id: row.id },
      changes,
    })
  })
  await applyRoles(call, roleChanges)
}

export async function deleteScimGroup(call: ScimCall, id: string): Promise<void> {
  const access = await requireScim(call, true)
  const row = await loadGroup(call, id)
  const members = (await groupMembers(call.ctx.db, call.tenantId, [row.id])).get(row.id) ?? []
  const roleChanges = await planRoles(call, access, members, { groupId: row.id, members: new Set() })
  await call.ctx.db.transaction().execute(async (tx) => {
    await deleteGroup(tx, call.tenantId, row.id)
    await bumpScimUserVersion(tx, call.tenantId, members)
    await recordAudit(tx, call.ctx.clock, call.actor, {
      action: 'scim_group.deleted',
      tenantId: call.tenantId,
      target: { type: 'scimGroup', id: row.id },
      changes: { displayName: [row.display_name, null] },
    })
  })
  await applyRoles(call, roleChanges)
}

/** Every group matching the filter, in order of creation. */
export async function findScimGroups(call: ScimCall, filter: Filter | undefined): Promise<Resource[]> {
  await requireScim(call, false)
  const eq = filter?.find((c) => c.op === 'eq' && typeof c.value === 'string' && !c.valueFilter && !c.sub)
  const member = filter?.find((c) => c.attr === 'members' && (c.sub === 'value' || c.valueFilter))
  const memberId = member?.op === 'eq' ? member.value : member?.valueFilter?.find((v) => v.op === 'eq')?.value
  let rows: ScimGroupRow[]
  if (eq?.attr === 'id')
    rows = UUID.test(eq.value as string)
      ? [await findGroup(call.ctx.db, call.tenantId, (eq.value as string).toLowerCase())].filter(
          (r): r is ScimGroupRow => !!r,
        )
      : []
  else if (eq?.attr === 'displayname')
    rows = await findGroupsBy(call.ctx.db, call.tenantId, {
      displayNameKey: (eq.value as string).toLowerCase(),
    })
  else if (eq?.attr === 'externalid')
    rows = await findGroupsBy(call.ctx.db, call.tenantId, { externalId: eq.value as string })
  else if (typeof memberId === 'string')
    rows = UUID.test(memberId)
      ? await findGroupsBy(call.ctx.db, call.tenantId, { memberId: memberId.toLowerCase() })
      : []
  else rows = await listGroups(call.ctx.db, call.tenantId)
  rows.sort((a, b) => a.created.getTime() - b.created.getTime() || (a.id < b.id ? -1 : 1))
  const members = await groupMembers(
    call.ctx.db,
    call.tenantId,
    rows.map((r) => r.id),
  )
  return rows
    .filter((r) => {
      if (!filter) return true
      const list = members.get(r.id) ?? []
      const subject = {
        id: r.id,
        displayname: r.display_name,
        externalid: r.external_id ?? undefined,
        members: list.map((value) => ({ value })),
      }
      return matches(subject, filter, false, CASE_EXACT)
    })
    .map((r) => toScimGroup(r, members.get(r.id) ?? [], call.baseUrl))
}
