import { AppError } from '../../errors.js'
import { removeMembership } from '../memberships/membership-update.js'
import { updateProvisionedIdentity } from '../users/provisioned-identity.js'
import { normalizeEmail } from '../users/user-rules.js'
import { findScimUsersBy, insertScimUser, updateScimUser } from './scim.repository.js'
import { requireScim, type ScimCall } from './scim-context.js'
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
import { statusFor, storeScimUser } from './scim-user-store.js'
import type { Stored } from './scim-values.js'

/**
 * SCIM Users (docs/scim.md): a User is a membership of this tenant. Creating one creates or links the
 * platform user through the memberships service (scim-user-create.service.ts); `active` moves the membership's status; DELETE removes
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

export function userNameOf(stored: Stored): string {
  const userName = typeof stored.userName === 'string' ? stored.userName.trim() : ''
  if (userName === '') throw invalidValue('userName is required')
  if (userName.length > 255) throw invalidValue('userName is longer than 255 characters')
  return userName
}

export function namesOf(stored: Stored): { firstName: string; lastName: string } {
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
export async function checkUnique(
  call: ScimCall,
  userName: string,
  email: string,
  self?: string,
): Promise<void> {
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

/**
 * Stores a user's next state (PUT, PATCH): the identity of a person this SCIM made, the SCIM attributes
 * and the status `active` asks for, in one transaction — one event for the membership
 * (scim-user-store.ts), and the user's own `user.updated` when its names or e-mail changed.
 */
export async function writeScimUser(call: ScimCall, current: UserView, next: Patchable): Promise<Resource> {
  const userName = userNameOf(next.stored)
  const email = emailOf(next.stored)
  const userId = current.membership.userId
  await checkUnique(call, userName, email, userId)
  const { ctx, tenantId } = call
  const now = ctx.clock.now()
  const row = {
    user_name: userName,
    user_name_key: userName.toLowerCase(),
    email_key: email,
    external_id: (next.stored.externalId as string | undefined) ?? null,
    active: next.active ?? null,
    updated: now,
    attributes: JSON.stringify(next.stored),
  }
  // `active` moves the status only when sent or changed: a PATCH of other attributes leaves a member
  // disabled through /v1 as it is.
  const wasActive = current.scim ? (current.scim.active ?? undefined) : activeOf(current)
  const status =
    next.active !== wasActive || next.active !== undefined
      ? statusFor(current.membership.status, next.active)
      : undefined
  let identityChanged = false
  // A taken key — the e-mail of another platform user, a userName or e-mail another SCIM user took
  // meanwhile — is its 409, answered as `uniqueness` (db/constraint-errors.ts, docs/scim.md).
  await storeScimUser(
    call,
    current.membership,
    status,
    async (tx) => {
      // The names and e-mail of a person this SCIM made follow the directory, in the same transaction.
      if (current.scim?.provisioned) {
        const identity = { email, ...namesOf(next.stored) }
        identityChanged = await updateProvisionedIdentity(tx, ctx.clock, call.actor, userId, identity)
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
    },
    { before: (current.scim?.attributes as Stored | undefined) ?? {}, after: next.stored },
  )
  if (identityChanged) ctx.access.invalidate()
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
