import { ROLE_IDS } from '../../access/permissions.js'
import { AppError } from '../../errors.js'
import { toMembership } from '../memberships/membership-record.js'
import { removeMembership } from '../memberships/membership-update.js'
import type { Membership } from '../memberships/memberships.schemas.js'
import {
  createMembership,
  getMembershipRecord,
  newMemberWithUser,
} from '../memberships/memberships.service.js'
import { findUserByEmail } from '../users/users.repository.js'
import { findScimUser, insertScimUser, type ScimUserRow } from './scim.repository.js'
import { provisioningRoleId, requireScim, type ScimCall } from './scim-context.js'
import { uniqueness } from './scim-error.js'
import type { Patchable } from './scim-patch.js'
import { type Resource, toScimUser } from './scim-resources.js'
import { statusFor, storeScimUser } from './scim-user-store.js'
import { writeProvisionedUser } from './scim-user-writes.js'
import { checkUnique, emailOf, loadView, namesOf, userNameOf } from './scim-users.service.js'

/**
 * SCIM's create of a User (API.md §16): a person no platform user has the e-mail of becomes a platform
 * user with an accepted membership and its SCIM row, all written in one statement; a platform user
 * already known is linked — made a member, or adopted when a member already. `active: false` creates
 * the membership disabled (one `membership.created` with that status, never a create then a move); an
 * adopted member's status moves with its SCIM row, in one transaction and one event (scim-user-store.ts).
 */

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
 * A person no platform user has the e-mail of: the platform user, its membership with the default role
 * (accepted, or disabled for `active: false`) and the SCIM row, written together (scim-user-writes.ts).
 * Undefined when the e-mail belongs to a platform user after all: linkExistingPerson then links that user.
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
    status: input.active === false ? 'disabled' : 'accepted',
  })
  const now = member.membership.now
  const userId = member.user.row.id
  const row = scimRowOf(tenantId, userId, userName, email, input, true, now)
  let written: Awaited<ReturnType<typeof writeProvisionedUser>>
  try {
    written = await writeProvisionedUser(ctx, {
      member,
      scim: { ...row, attributes: JSON.stringify(input.stored) },
    })
  } catch (error) {
    if (error instanceof AppError && error.reason === 'email_taken') return undefined
    throw error
  }
  const membership = toMembership(written.membership, now)
  const scim: ScimUserRow = { ...row, attributes: input.stored, version: written.scimVersion }
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
      roleId: await provisioningRoleId(call),
      status: input.active === false ? 'disabled' : 'accepted',
      // An unknown e-mail becomes a platform user (Platform User role, no password).
      ...(existing ? {} : { platformRoleId: ROLE_IDS.platformUser, ...names }),
    })
  }
  const row = {
    ...scimRowOf(tenantId, membership.userId, userName, email, input, !existing, ctx.clock.now()),
    attributes: JSON.stringify(input.stored),
  }
  try {
    // A membership made here holds its status already, and membership.created tells of it; an adopted
    // member's SCIM row comes with the status `active` asks for.
    if (created) await insertScimUser(ctx.db, row)
    else {
      const status = statusFor(membership.status, input.active)
      const attributes = { before: {}, after: input.stored }
      await storeScimUser(call, membership, status, (tx) => insertScimUser(tx, row), attributes)
    }
  } catch (error) {
    // Another request took the userName or e-mail meanwhile: the membership this one made goes again.
    if (created) await removeMembership(ctx, actor, tenantId, membership.userId).catch(() => undefined)
    if ((error as { code?: string }).code === '23505')
      throw uniqueness(`A user with userName "${userName}" already exists`)
    throw error
  }
  return toScimUser(await loadView(call, membership.userId), call.baseUrl)
}

/** A SCIM user's row as a create stores it, but for its attributes (stored JSON, or the object read). */
function scimRowOf(
  tenantId: string,
  userId: string,
  userName: string,
  email: string,
  input: Patchable,
  provisioned: boolean,
  now: Date,
): Omit<ScimUserRow, 'attributes' | 'version'> {
  return {
    tenant_id: tenantId,
    user_id: userId,
    user_name: userName,
    user_name_key: userName.toLowerCase(),
    email_key: email,
    external_id: (input.stored.externalId as string | undefined) ?? null,
    active: input.active ?? null,
    provisioned,
    created: now,
    updated: now,
  }
}
