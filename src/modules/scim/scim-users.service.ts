import { ROLE_IDS } from '../../access/permissions.js'
import { AppError } from '../../errors.js'
import { recordAudit } from '../audit/audit.repository.js'
import { removeMembership, updateMembership } from '../memberships/membership-update.js'
import type { Membership } from '../memberships/memberships.schemas.js'
import { createMembership, getMembershipRecord, listMemberships } from '../memberships/memberships.service.js'
import { updateProvisionedIdentity } from '../users/provisioned-identity.js'
import { normalizeEmail } from '../users/user-rules.js'
import { findUserByEmail } from '../users/users.repository.js'
import {
  findScimUser,
  findScimUsersBy,
  groupsOfUsers,
  insertScimUser,
  listScimUsers,
  type ScimUserRow,
  updateScimUser,
} from './scim.repository.js'
import { ENTERPRISE_SCHEMA, USER_RESOURCE } from './scim-attributes.js'
import { defaultRoleId, requireScim, type ScimCall } from './scim-context.js'
import { invalidValue, scimNotFound, uniqueness } from './scim-error.js'
import { type Comparison, type Filter, matches } from './scim-filter.js'
import type { Patchable } from './scim-patch.js'
import {
  activeOf,
  derivedAttributes,
  type Resource,
  toScimUser,
  type UserView,
  userVersion,
} from './scim-resources.js'
import type { Stored } from './scim-values.js'

/**
 * SCIM Users (API.md §16): a User is a membership of this tenant. Creating one creates or links the
 * platform user through the memberships service; `active` moves the membership's status; DELETE removes
 * the membership, never the person. The attributes the directory sends are stored per tenant, as sent.
 */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const USER_FILTER_PATHS = new Set([
  'id',
  'username',
  'externalid',
  'emails.value',
  'emails[type].value',
  'active',
])
const CASE_EXACT = new Set(['id', 'externalid'])

function notFound() {
  return scimNotFound('User')
}

/** The e-mail of a resource: emails[primary], else emails[type work], else the first, else userName. */
export function emailOf(stored: Stored): string {
  const emails = (stored.emails as { value?: string; type?: string; primary?: boolean }[] | undefined) ?? []
  const chosen =
    emails.find((e) => e.primary === true && e.value) ??
    emails.find((e) => e.type?.toLowerCase() === 'work' && e.value) ??
    emails.find((e) => e.value)
  const candidate = chosen?.value ?? (typeof stored.userName === 'string' ? stored.userName : '')
  const email = normalizeEmail(candidate)
  if (!EMAIL.test(email) || email.length > 254) {
    throw invalidValue('The user needs an e-mail: emails[].value, or a userName that is an e-mail address')
  }
  return email
}

function userNameOf(stored: Stored): string {
  const userName = typeof stored.userName === 'string' ? stored.userName.trim() : ''
  if (userName === '') throw invalidValue('userName is required')
  if (userName.length > 255) throw invalidValue('userName is longer than 255 characters')
  return userName
}

function namesOf(stored: Stored): { firstName: string; lastName: string } {
  const name = (stored.name as { givenName?: string; familyName?: string } | undefined) ?? {}
  return { firstName: (name.givenName ?? '').slice(0, 255), lastName: (name.familyName ?? '').slice(0, 255) }
}

async function view(
  call: ScimCall,
  membership: Membership,
  scim: ScimUserRow | undefined,
): Promise<UserView> {
  const groups =
    (await groupsOfUsers(call.ctx.db, call.tenantId, [membership.userId])).get(membership.userId) ?? []
  return { membership, scim, groups }
}

async function loadView(call: ScimCall, userId: string): Promise<UserView> {
  let membership: Membership
  try {
    membership = await getMembershipRecord(call.ctx, call.tenantId, userId)
  } catch (error) {
    if (error instanceof AppError && error.statusCode === 404) throw notFound()
    throw error
  }
  return view(call, membership, await findScimUser(call.ctx.db, call.tenantId, membership.userId))
}

export async function getScimUser(call: ScimCall, userId: string): Promise<Resource> {
  await requireScim(call, false)
  return toScimUser(await loadView(call, userId), call.baseUrl)
}

/** Its current version, for If-Match and If-None-Match. */
export async function scimUserVersion(call: ScimCall, userId: string): Promise<string> {
  return userVersion(await loadView(call, userId))
}

/** Throws 409 uniqueness when another SCIM user of the tenant holds this userName or e-mail. */
async function checkUnique(call: ScimCall, userName: string, email: string, self?: string): Promise<void> {
  const db = call.ctx.db
  const [byName, byEmail] = await Promise.all([
    findScimUsersBy(db, call.tenantId, { userNameKey: userName.toLowerCase() }),
    findScimUsersBy(db, call.tenantId, { emailKey: email }),
  ])
  if (byName.some((r) => r.user_id !== self))
    throw uniqueness(`A user with userName "${userName}" already exists`)
  if (byEmail.some((r) => r.user_id !== self))
    throw uniqueness(`A user with e-mail "${email}" already exists`)
}

export async function createScimUser(call: ScimCall, input: Patchable): Promise<Resource> {
  await requireScim(call, true)
  const userName = userNameOf(input.stored)
  const email = emailOf(input.stored)
  await checkUnique(call, userName, email)
  const { ctx, actor, tenantId } = call
  const existing = await findUserByEmail(ctx.db, email)
  let membership: Membership | undefined
  if (existing) {
    try {
      membership = await getMembershipRecord(ctx, tenantId, existing.id)
    } catch (error) {
      if (!(error instanceof AppError && error.statusCode === 404)) throw error
    }
  }
  if (membership && (await findScimUser(ctx.db, tenantId, membership.userId))) {
    throw uniqueness(`A user with e-mail "${email}" already exists`)
  }
  const created = !membership
  if (!membership) {
    const names = namesOf(input.stored)
    membership = await createMembership(ctx, actor, tenantId, {
      email,
      roleId: await defaultRoleId(call),
      status: 'accepted',
      // An unknown e-mail becomes a platform user (Platform User role, no password).
      ...(existing ? {} : { platformRoleId: ROLE_IDS.platformUser, ...names }),
    })
  }
  const now = ctx.clock.now()
  try {
    await ctx.db.transaction().execute(async (tx) => {
      await insertScimUser(tx, {
        tenant_id: tenantId,
        user_id: membership.userId,
        user_name: userName,
        user_name_key: userName.toLowerCase(),
        email_key: email,
        external_id: (input.stored.externalId as string | undefined) ?? null,
        active: input.active ?? null,
        attributes: JSON.stringify(input.stored),
        provisioned: !existing,
        created: now,
        updated: now,
      })
      if (!created) await recordScimUpdate(call, tx, membership.userId, {}, input.stored)
    })
  } catch (error) {
    // Another request took the userName or e-mail meanwhile: the membership this one made goes again.
    if (created) await removeMembership(ctx, actor, tenantId, membership.userId).catch(() => undefined)
    if ((error as { code?: string }).code === '23505')
      throw uniqueness(`A user with userName "${userName}" already exists`)
    throw error
  }
  await applyActive(call, membership, input.active)
  return toScimUser(await loadView(call, membership.userId), call.baseUrl)
}

/** `active` → the membership's status (API.md §16): false disables from any status, true enables. */
async function applyActive(
  call: ScimCall,
  membership: Membership,
  active: boolean | undefined,
): Promise<void> {
  const { ctx, actor, tenantId } = call
  const status = membership.status
  if (active === false && status !== 'disabled') {
    // A pending or invited membership is accepted first (its invitation dies), then disabled.
    if (status !== 'accepted')
      await updateMembership(ctx, actor, tenantId, membership.userId, { status: 'accepted' })
    await updateMembership(ctx, actor, tenantId, membership.userId, { status: 'disabled' })
  } else if (active !== false && status !== 'accepted' && (active === true || status === 'disabled')) {
    await updateMembership(ctx, actor, tenantId, membership.userId, { status: 'accepted' })
  }
}

async function recordScimUpdate(
  call: ScimCall,
  tx: Parameters<typeof recordAudit>[0],
  userId: string,
  before: Stored,
  after: Stored,
): Promise<void> {
  const changes: Record<string, [unknown, unknown]> = {}
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[key] ?? null
    const now = after[key] ?? null
    if (JSON.stringify(was) !== JSON.stringify(now)) changes[key] = [was, now]
  }
  if (Object.keys(changes).length === 0) return
  await recordAudit(tx, call.ctx.clock, call.actor, {
    action: 'scim_user.updated',
    tenantId: call.tenantId,
    target: { type: 'membership', id: userId },
    changes,
  })
}

/** The current state of a user as PATCH and PUT start from it. */
export async function currentUser(
  call: ScimCall,
  userId: string,
): Promise<{ view: UserView; patchable: Patchable }> {
  await requireScim(call, true)
  const current = await loadView(call, userId)
  const stored = (current.scim?.attributes as Stored | undefined) ?? derivedAttributes(current.membership)
  const active = current.scim ? (current.scim.active ?? undefined) : activeOf(current)
  return {
    view: current,
    patchable: { stored, ...(active !== undefined ? { active } : { active: undefined }) },
  }
}

/** Stores a user's next state (PUT, PATCH): attributes, then identity (if provisioned), then status. */
export async function writeScimUser(call: ScimCall, current: UserView, next: Patchable): Promise<Resource> {
  const userName = userNameOf(next.stored)
  const email = emailOf(next.stored)
  const userId = current.membership.userId
  await checkUnique(call, userName, email, userId)
  const { ctx, tenantId } = call
  if (current.scim?.provisioned) {
    try {
      await updateProvisionedIdentity(ctx, call.actor, userId, { email, ...namesOf(next.stored) })
    } catch (error) {
      if (error instanceof AppError && error.reason === 'email_taken') throw uniqueness(error.message)
      throw error
    }
  }
  const now = ctx.clock.now()
  const before = (current.scim?.attributes as Stored | undefined) ?? {}
  await ctx.db.transaction().execute(async (tx) => {
    const row = {
      user_name: userName,
      user_name_key: userName.toLowerCase(),
      email_key: email,
      external_id: (next.stored.externalId as string | undefined) ?? null,
      active: next.active ?? null,
      updated: now,
      attributes: JSON.stringify(next.stored),
    }
    if (current.scim) await updateScimUser(tx, tenantId, userId, row)
    else
      await insertScimUser(tx, {
        ...row,
        tenant_id: tenantId,
        user_id: userId,
        provisioned: false,
        created: now,
      })
    await recordScimUpdate(call, tx, userId, before, next.stored)
  })
  if (
    next.active !== (current.scim ? (current.scim.active ?? undefined) : activeOf(current)) ||
    next.active !== undefined
  ) {
    await applyActive(call, current.membership, next.active)
  }
  return toScimUser(await loadView(call, userId), call.baseUrl)
}

export async function deleteScimUser(call: ScimCall, userId: string): Promise<void> {
  await requireScim(call, true)
  try {
    await removeMembership(call.ctx, call.actor, call.tenantId, userId)
  } catch (error) {
    if (error instanceof AppError && error.statusCode === 404) throw notFound()
    throw error
  }
}

/** The filter's subject for a user: lower-cased keys, the listed attributes only. */
function subjectOf(v: UserView, resource: Resource): Record<string, unknown> {
  const emails = ((resource.emails as Stored[] | undefined) ?? []).map((e) => ({
    value: e.value,
    type: e.type,
    primary: e.primary,
  }))
  return {
    id: v.membership.userId,
    username: resource.userName,
    externalid: resource.externalId,
    emails,
    active: resource.active ?? v.membership.status === 'accepted',
  }
}

/** The candidates an indexed comparison narrows to, or undefined when the filter needs a scan. */
async function candidates(call: ScimCall, filter: Filter | undefined): Promise<UserView[] | undefined> {
  const eq = filter?.find((c) => c.op === 'eq' && typeof c.value === 'string' && indexable(c))
  if (!eq) return undefined
  const value = eq.value as string
  const { ctx, tenantId } = call
  const key = eq.valueFilter ? 'emails.value' : `${eq.attr}${eq.sub ? `.${eq.sub}` : ''}`
  const userIds = new Set<string>()
  if (key === 'id') userIds.add(value.toLowerCase())
  else if (key === 'externalid')
    for (const r of await findScimUsersBy(ctx.db, tenantId, { externalId: value })) userIds.add(r.user_id)
  else {
    const lookup =
      key === 'username' ? { userNameKey: value.toLowerCase() } : { emailKey: normalizeEmail(value) }
    for (const r of await findScimUsersBy(ctx.db, tenantId, lookup)) userIds.add(r.user_id)
    // A member SCIM never touched answers to its e-mail as userName and e-mail.
    const user = await findUserByEmail(ctx.db, normalizeEmail(value))
    if (user) userIds.add(user.id)
  }
  const views: UserView[] = []
  for (const id of userIds) {
    if (!/^[0-9a-f-]{36}$/.test(id)) continue
    try {
      views.push(await loadView(call, id))
    } catch (error) {
      if (!(error instanceof Error && 'status' in error && (error as { status: number }).status === 404))
        throw error
    }
  }
  return views
}

function indexable(c: Comparison): boolean {
  if (c.valueFilter) return c.attr === 'emails' && c.sub === 'value'
  return (
    (['id', 'username', 'externalid'].includes(c.attr) && c.sub === undefined) ||
    (c.attr === 'emails' && c.sub === 'value')
  )
}

/** Every user of the tenant matching the filter, in order of creation. */
export async function findScimUsers(call: ScimCall, filter: Filter | undefined): Promise<Resource[]> {
  await requireScim(call, false)
  let views = await candidates(call, filter)
  if (!views) {
    const page = await listMemberships(call.ctx, call.actor, call.tenantId, {})
    const rows = new Map((await listScimUsers(call.ctx.db, call.tenantId)).map((r) => [r.user_id, r]))
    const groups = await groupsOfUsers(
      call.ctx.db,
      call.tenantId,
      page.items.map((m) => m.userId),
    )
    views = page.items.map((m) => ({
      membership: m,
      scim: rows.get(m.userId),
      groups: groups.get(m.userId) ?? [],
    }))
  }
  const out: { created: string; id: string; resource: Resource }[] = []
  for (const v of views) {
    const resource = toScimUser(v, call.baseUrl)
    if (filter && !matches(subjectOf(v, resource), filter, false, CASE_EXACT)) continue
    out.push({ created: (resource.meta as { created: string }).created, id: v.membership.userId, resource })
  }
  out.sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : 1))
  return out.map((o) => o.resource)
}

export { ENTERPRISE_SCHEMA, USER_RESOURCE }
