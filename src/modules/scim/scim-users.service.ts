import { ROLE_IDS } from '../../access/permissions.js'
import { AppError } from '../../errors.js'
import { recordAudit } from '../audit/audit.repository.js'
import { toMembership } from '../memberships/membership-record.js'
import { removeMembership, updateMembership } from '../memberships/membership-update.js'
import type { Membership } from '../memberships/memberships.schemas.js'
import {
  createMembership,
  getMembershipRecord,
  newMemberWithUser,
} from '../memberships/memberships.service.js'
import { updateProvisionedIdentity } from '../users/provisioned-identity.js'
import { normalizeEmail } from '../users/user-rules.js'
import { findUserByEmail } from '../users/users.repository.js'
import {
  findScimUser,
  findScimUsersBy,
  insertScimUser,
  type ScimUserRow,
  updateScimUser,
} from './scim.repository.js'
import { defaultRoleId, provisioningRoleId, requireScim, type ScimCall } from './scim-context.js'
import { invalidValue, scimNotFound, uniqueness } from './scim-error.js'
import type { Patchable } from './scim-patch.js'
import {
  activeOf,
  derivedAttributes,
  type Resource,
  toScimUser,
  type UserView,
  userVersion,
} from './scim-resources.js'
import { findUserViews } from './scim-user-reads.js'
import { writeProvisionedUser } from './scim-user-writes.js'
import type { Stored } from './scim-values.js'

/**
 * SCIM Users (API.md §16): a User is a membership of this tenant. Creating one creates or links the
 * platform user through the memberships service; `active` moves the membership's status; DELETE removes
 * the membership, never the person. The attributes the directory sends are stored per tenant, as sent.
 */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

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

/** A user as SCIM shows it: its membership, its SCIM row and its groups, read in one statement. */
export async function loadView(call: ScimCall, userId: string): Promise<UserView> {
  const [view] = await findUserViews(call.ctx.db, call.tenantId, { userId })
  if (!view) throw notFound()
  return view
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
  return (
    (await provisionNewPerson(call, input, userName, email)) ??
    linkExistingPerson(call, input, userName, email)
  )
}

/**
 * A person no platform user has the e-mail of: the platform user, its accepted membership with the
 * default role and the SCIM row, written together (scim-user-writes.ts). Undefined when the e-mail
 * belongs to a platform user after all: linkExistingPerson then links that user.
 */
async function provisionNewPerson(
  call: ScimCall,
  input: Patchable,
  userName: string,
  email: string,
): Promise<Resource | undefined> {
  const { ctx, actor, tenantId } = call
  const member = await newMemberWithUser(ctx, actor, tenantId, {
    email,
    roleId: await provisioningRoleId(call),
    ...namesOf(input.stored),
  })
  const now = member.membership.now
  const userId = member.user.row.id
  let written: Awaited<ReturnType<typeof writeProvisionedUser>>
  try {
    written = await writeProvisionedUser(ctx, {
      member,
      scim: {
        tenant_id: tenantId,
        user_id: userId,
        user_name: userName,
        user_name_key: userName.toLowerCase(),
        email_key: email,
        external_id: (input.stored.externalId as string | undefined) ?? null,
        active: input.active ?? null,
        attributes: JSON.stringify(input.stored),
        provisioned: true,
        created: now,
        updated: now,
      },
    })
  } catch (error) {
    if (error instanceof AppError && error.reason === 'email_taken') return undefined
    throw error
  }
  const membership = toMembership(written.membership, now)
  if (input.active === false) {
    await applyActive(call, membership, false)
    return toScimUser(await loadView(call, userId), call.baseUrl)
  }
  const scim: ScimUserRow = {
    tenant_id: tenantId,
    user_id: userId,
    user_name: userName,
    user_name_key: userName.toLowerCase(),
    email_key: email,
    external_id: (input.stored.externalId as string | undefined) ?? null,
    active: input.active ?? null,
    attributes: input.stored,
    provisioned: true,
    created: now,
    updated: now,
    version: written.scimVersion,
  }
  return toScimUser({ membership, scim, groups: [] }, call.baseUrl)
}

/** A person who is a platform user already: linked, or adopted when already a member. */
async function linkExistingPerson(
  call: ScimCall,
  input: Patchable,
  userName: string,
  email: string,
): Promise<Resource> {
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
  membership: Pick<Membership, 'userId' | 'status'>,
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
