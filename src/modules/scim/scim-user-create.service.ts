import { AppError } from '../../errors.js'
import { newMembershipOfUser, newMemberWithUser } from '../memberships/directory-membership.js'
import { toMembership } from '../memberships/membership-record.js'
import type { Membership } from '../memberships/memberships.schemas.js'
import { getMembershipRecord } from '../memberships/memberships.service.js'
import { findUserByEmail } from '../users/users.repository.js'
import { findScimUser, insertScimUser, type ScimUserRow } from './scim.repository.js'
import { provisioningRoleId, requireScim, type ScimCall } from './scim-context.js'
import { ScimError, uniqueness } from './scim-error.js'
import type { Patchable } from './scim-patch.js'
import { type Resource, toScimUser } from './scim-resources.js'
import { statusFor, storeScimUser } from './scim-user-store.js'
import { writeLinkedUser, writeProvisionedUser } from './scim-user-writes.js'
import { checkUnique, emailOf, loadView, namesOf, userNameOf } from './scim-users.service.js'

/**
 * SCIM's create of a User (docs/scim.md): a person no platform user has the e-mail of becomes a platform
 * user with an accepted membership and its SCIM row, all written in one statement; a platform user
 * already known is linked — made a member with its SCIM row, in one statement too — or adopted when a
 * member already. `active: false` creates the membership disabled (one `membership.created` with that
 * status, never a create then a move); an adopted member's status moves with its SCIM row, in one
 * transaction and one event (scim-user-store.ts).
 *
 * Writes need MANAGE_TENANT_ENROLLMENT, and only creating a platform user needs MANAGE_ALL_USERS as well:
 * a key without it links and adopts people who exist, and is refused (403, nothing written) a new one.
 */

/** The attempts at a create whose person is erased, or appears, between the create and the link. */
const ATTEMPTS = 3

export async function createScimUser(call: ScimCall, input: Patchable): Promise<Resource> {
  await requireScim(call, true)
  const userName = userNameOf(input.stored)
  const email = emailOf(input.stored)
  const mayCreatePeople = await call.ctx.access.holdsAnywhere(call.actor, 'MANAGE_ALL_USERS')
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const created = mayCreatePeople ? await provisionNewPerson(call, input, userName, email) : undefined
    if (created) return created
    const linked = await linkExistingPerson(call, input, userName, email)
    if (linked) return linked
    if (!mayCreatePeople) {
      throw new AppError('permission_denied', 'MANAGE_ALL_USERS is required to create a platform user')
    }
  }
  throw new ScimError(
    409,
    `The platform user with e-mail "${email}" changed meanwhile; send the create again`,
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
  const row = { ...scimRowOf(tenantId, userName, email, input, true, now), user_id: userId }
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

/**
 * A person who is a platform user already: linked — its membership, its event and its SCIM row in one
 * statement — or adopted when already a member. Undefined when no platform user has the e-mail (any more).
 */
async function linkExistingPerson(
  call: ScimCall,
  input: Patchable,
  userName: string,
  email: string,
): Promise<Resource | undefined> {
  const { ctx, actor, tenantId } = call
  const existing = await findUserByEmail(ctx.db, email)
  if (!existing) return undefined
  await checkUnique(call, userName, email)
  const membership = await membershipOf(call, existing.id)
  const row = scimRowOf(tenantId, userName, email, input, false, ctx.clock.now())
  const attributes = JSON.stringify(input.stored)
  if (!membership) {
    const member = await newMembershipOfUser(ctx, actor, tenantId, {
      email,
      roleId: await provisioningRoleId(call),
      status: input.active === false ? 'disabled' : 'accepted',
    })
    const written = await writeLinkedUser(ctx, { member, scim: { ...row, attributes } })
    if (!written) return undefined
    // The person gains a membership: its cached permissions go.
    ctx.access.invalidate()
    const linked = toMembership(written.membership, member.membership.now)
    const scim: ScimUserRow = {
      ...row,
      user_id: linked.userId,
      attributes: input.stored,
      version: written.scimVersion,
    }
    return toScimUser({ membership: linked, scim, groups: [] }, call.baseUrl)
  }
  if (await findScimUser(ctx.db, tenantId, membership.userId)) {
    throw uniqueness(`A user with e-mail "${email}" already exists`)
  }
  // An adopted member's SCIM row comes with the status `active` asks for, in one transaction.
  const status = statusFor(membership.status, input.active)
  await storeScimUser(
    call,
    membership,
    status,
    (tx) => insertScimUser(tx, { ...row, user_id: membership.userId, attributes }),
    { before: {}, after: input.stored },
  )
  return toScimUser(await loadView(call, membership.userId), call.baseUrl)
}

/** The person's membership of the tenant, or undefined when there is none. */
async function membershipOf(call: ScimCall, userId: string): Promise<Membership | undefined> {
  try {
    return await getMembershipRecord(call.ctx, call.tenantId, userId)
  } catch (error) {
    if (error instanceof AppError && error.statusCode === 404) return undefined
    throw error
  }
}

/** A SCIM user's row as a create stores it, but for its user and attributes. */
function scimRowOf(
  tenantId: string,
  userName: string,
  email: string,
  input: Patchable,
  provisioned: boolean,
  now: Date,
): Omit<ScimUserRow, 'user_id' | 'attributes' | 'version'> {
  return {
    tenant_id: tenantId,
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
