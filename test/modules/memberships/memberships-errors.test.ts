import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertUser, uniqueEmail } from '../../helpers/fixtures.js'
import { membershipRequests } from '../../helpers/memberships.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Memberships (docs/api.md#tenant-users-and-invitations): what is refused and how — unknown users, tenants and roles, a second
 * membership, a status move the state machine does not have — and that a refusal changes nothing.
 */
const t = useTestApp()
let token: string
let tenant: { id: string; name: string }

beforeAll(async () => {
  token = await t.adminToken()
})
// Fixture users get a password_changed_at from the wall clock; keep the app's clock from lagging behind it.
beforeEach(() => t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime()))))
// Each test works in a tenant of its own.
beforeEach(async () => {
  tenant = await createTenantAsAdmin(t)
})

const { invite, update, outboxRows } = membershipRequests(
  () => t,
  () => token,
)

/** A platform user invited as pending into the test's tenant. */
async function pendingUser() {
  const user = await insertUser(t.database.handle.db)
  const response = await invite(tenant.id, { email: user.email })
  expect(response.status).toBe(201)
  return user
}

describe('memberships: refusals', () => {
  it('answers 404 user_not_found for an e-mail with no platform user, and stores nothing', async () => {
    const email = uniqueEmail('nobody')
    const response = await invite(tenant.id, { email })
    expect(response.status).toBe(404)
    expect(response.body.error.reason).toBe('user_not_found')
    const users = await t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, { token })
    expect(users.status).toBe(404)
  })
  it('refuses an invitation past the invitee’s mail limit with 429, creating neither the user nor its mail', async () => {
    const email = uniqueEmail('limited')
    // Invitations of an e-mail nobody has yet count against it too (5 an hour).
    for (let i = 0; i < 5; i++)
      expect((await invite(tenant.id, { email, status: 'invited' })).status).toBe(404)
    const limited = await invite(tenant.id, {
      email,
      status: 'invited',
      platformRoleId: ROLE_IDS.platformUser,
    })
    expect(limited.status).toBe(429)
    expect(limited.body.error.reason).toBe('rate_limited')
    const users = await t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, { token })
    expect(users.status).toBe(404)
    expect(await outboxRows(tenant.id)).toHaveLength(0)
  })
  it('refuses a role that is not a tenant role, or not a role, with 400 naming roleId', async () => {
    const user = await insertUser(t.database.handle.db)
    for (const roleId of [ROLE_IDS.platformUser, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'not-a-uuid']) {
      const response = await invite(tenant.id, { email: user.email, roleId })
      expect(response.status).toBe(400)
      expect(response.body.error.attribute).toHaveProperty('roleId')
    }
    const badStatus = await invite(tenant.id, { email: user.email, status: 'disabled' })
    expect(badStatus.status).toBe(400)
    expect(badStatus.body.error.attribute).toHaveProperty('status')
    const badEmail = await invite(tenant.id, { email: 'not an e-mail' })
    expect(badEmail.status).toBe(400)
    expect(badEmail.body.error.attribute).toHaveProperty('email')
  })
  it('answers 409 already_member for a second invitation of the same user, whatever the status', async () => {
    const user = await insertUser(t.database.handle.db)
    expect((await invite(tenant.id, { email: user.email })).status).toBe(201)
    for (const status of ['pending', 'invited', 'accepted']) {
      const again = await invite(tenant.id, { email: user.email.toUpperCase(), status })
      expect(again.status).toBe(409)
      expect(again.body.error.reason).toBe('already_member')
      expect(again.body.error.message).toContain('already exists')
    }
    expect(
      await outboxRows(tenant.id).then((rows) => rows.filter((r) => (r.payload as any).userId === user.id)),
    ).toEqual([])
  })
  it('answers 404 tenant_not_found for an unknown tenant', async () => {
    const user = await insertUser(t.database.handle.db)
    const response = await invite('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', { email: user.email })
    expect(response.status).toBe(404)
    expect(response.body.error.reason).toBe('tenant_not_found')
  })
  it('answers 409 invalid_state_transition to a move the table does not have, and changes nothing', async () => {
    const pending = await pendingUser()
    const refused = await update(tenant.id, pending.id, { status: 'disabled' })
    expect(refused.status).toBe(409)
    expect(refused.body.error.reason).toBe('invalid_state_transition')
    expect(refused.body.error.attribute).toHaveProperty('status')

    const member = await pendingUser()
    await update(tenant.id, member.id, { status: 'accepted' })
    for (const status of ['invited', 'pending']) {
      const response = await update(tenant.id, member.id, { status })
      expect(response.status).toBe(409)
      expect(response.body.error.reason).toBe('invalid_state_transition')
    }
    await update(tenant.id, member.id, { status: 'disabled' })
    for (const status of ['invited', 'pending']) {
      expect((await update(tenant.id, member.id, { status })).status).toBe(409)
    }
    const after = await t.request('GET', `/v1/tenants/${tenant.id}/users/${member.id}`, { token })
    expect(after.body.result.status).toBe('disabled')
    expect((await outboxRows(tenant.id)).filter((r) => (r.payload as any).userId === member.id)).toEqual([])

    const bogus = await update(tenant.id, member.id, { status: 'archived' })
    expect(bogus.status).toBe(400)
    expect(bogus.body.error.attribute).toHaveProperty('status')
  })
  it('refuses a platform role or an unknown role with 400', async () => {
    const user = await insertUser(t.database.handle.db)
    await invite(tenant.id, { email: user.email })
    const response = await update(tenant.id, user.id, { roleId: ROLE_IDS.platformAdministrator })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('roleId')
  })
  it('answers 404 for a user who is not in the tenant', async () => {
    const stranger = await insertUser(t.database.handle.db)
    const response = await update(tenant.id, stranger.id, { status: 'invited' })
    expect(response.status).toBe(404)
    expect(response.body.error.reason).toBe('user_not_found')
  })
})
