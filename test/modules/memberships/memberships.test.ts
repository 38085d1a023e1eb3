import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertUser, memberWithToken, uniqueEmail } from '../../helpers/fixtures.js'
import { membershipRequests } from '../../helpers/memberships.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Tenant users over HTTP (docs/api.md#tenant-users-and-invitations): invite with each status, every field of a membership (docs/product.md#memberships), the status
 * moves, role changes within the ceiling — the paths that succeed. The refusals are in
 * memberships-errors.test.ts; who may do what is in memberships-security.test.ts, mail
 * delivery in outbox.test.ts and the token's life in invitations.test.ts.
 */
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/
const TENANT_USER_FIELDS = [
  // docs/api.md#tenant-users-and-invitations: what the UIs read besides the brief's fields.
  'externalId',
  'platformStatus',
  'roleName',
  'tenantId',
  'userId',
  'email',
  'firstName',
  'lastName',
  'roleId',
  'status',
  'invitationStatus',
  'invitationEmailStatus',
  'state',
  'noPassword',
  'defaultIdentityProvider',
  'invitationExpiryDate',
  'invitationToken',
  'extension',
  'extensions',
  'activeExtension',
  'supervisorId',
  'capacityRuleId',
  'sessionStarted',
  'sessionReason',
  'workStationId',
  'clientLogLevel',
  'createdBy',
  'updatedBy',
  'created',
  'updated',
  // Who has no second factor, and until when a policy lets them act (docs/security.md, "Policy").
  'mfa',
  'mfaDeadline',
].sort()

const t = useTestApp()
let token: string
let adminId: string
let tenant: { id: string; name: string }

beforeAll(async () => {
  token = await t.adminToken()
  adminId = (await t.request('POST', '/v1/login', { token })).body.result.userId
})
// Each test works in a tenant of its own.
beforeEach(async () => {
  tenant = await createTenantAsAdmin(t)
})
// Fixture users get a password_changed_at from the wall clock; keep the app's clock from lagging behind it.
beforeEach(() => t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime()))))

const { invite, outboxRows } = membershipRequests(
  () => t,
  () => token,
)

/** The tenants a user's login lists, with the permissions it has there. */
async function loginTenants(user: { email: string; password: string }) {
  const login = await t.request('POST', '/v1/login', { token: await t.tokenFor(user.email, user.password) })
  expect(login.status).toBe(200)
  return login.body.result.tenants as Array<{ tenantId: string; roleId: string; tenantPermissions: string[] }>
}

describe('POST /v1/tenants/{tenantId}/users', () => {
  it('records a pending user by default with every field of the brief, and queues no mail', async () => {
    const user = await insertUser(t.database.handle.db)
    const response = await invite(tenant.id, { email: user.email.toUpperCase() })
    expect(response.status).toBe(201)
    const record = response.body.result
    expect(response.headers.location).toBe(`/v1/tenants/${tenant.id}/users/${user.id}`)
    expect(Object.keys(record).sort()).toEqual(TENANT_USER_FIELDS)
    expect(record).toMatchObject({
      tenantId: tenant.id,
      userId: user.id,
      email: user.email,
      roleId: ROLE_IDS.agent,
      status: 'pending',
      invitationStatus: 'pending',
      invitationEmailStatus: null,
      state: 'offline',
      noPassword: null,
      defaultIdentityProvider: null,
      invitationExpiryDate: null,
      invitationToken: null,
      activeExtension: null,
      supervisorId: null,
      capacityRuleId: null,
      sessionStarted: null,
      sessionReason: null,
      workStationId: '',
      clientLogLevel: null,
      createdBy: adminId,
      updatedBy: adminId,
    })
    // Every profile carries a default webrtc extension (docs/product.md#memberships).
    expect(record.extensions).toEqual([
      {
        type: 'webrtc',
        provider: 'twilio',
        region: 'default',
        sdkVersion: 'default',
        description: 'Default WebRTC extension',
        value: user.id,
      },
    ])
    expect(record.extension).toBe(user.id)
    expect(record.created).toMatch(ISO_Z)
    expect(record.created).toBe(record.updated)
    expect(await outboxRows(tenant.id)).toHaveLength(0)
    // The user is not a member yet: its login lists no tenant.
    expect(await loginTenants(user)).toEqual([])
  })

  it('makes an `accepted` user a member at once, with the role’s permissions, and sends no mail', async () => {
    const user = await insertUser(t.database.handle.db)
    const response = await invite(tenant.id, {
      email: user.email,
      status: 'accepted',
      roleId: ROLE_IDS.supervisor,
    })
    expect(response.status).toBe(201)
    expect(response.body.result).toMatchObject({
      status: 'accepted',
      invitationStatus: 'enabled',
      invitationEmailStatus: null,
    })
    expect(response.body.result.activeExtension).toEqual(response.body.result.extensions[0])
    const tenants = await loginTenants(user)
    expect(tenants).toHaveLength(1)
    expect(tenants[0]).toMatchObject({ tenantId: tenant.id, roleId: ROLE_IDS.supervisor })
    expect(tenants[0]!.tenantPermissions).toEqual([
      'VIEW_ALL_USERS',
      'MANAGE_ALL_USERS',
      'MANAGE_TENANT_ENROLLMENT',
      'VIEW_ALL_PROVIDERS',
      'VIEW_ALL_ROLES',
    ])
    expect(
      (await outboxRows(tenant.id)).filter((r) => (r.payload as { userId: string }).userId === user.id),
    ).toEqual([])
  })

  it('issues a 24-hour invitation with `invited` and queues its e-mail in the same transaction', async () => {
    const user = await insertUser(t.database.handle.db)
    const now = t.clock.now().getTime()
    const response = await invite(tenant.id, { email: user.email, status: 'invited' })
    expect(response.status).toBe(201)
    const record = response.body.result
    expect(record).toMatchObject({
      status: 'invited',
      invitationStatus: 'invited',
      invitationEmailStatus: 'queued',
    })
    expect(record.invitationToken).toBeNull()
    expect(record.activeExtension).toBeNull()
    expect(new Date(record.invitationExpiryDate).getTime()).toBe(now + 86_400_000)
    const mails = (await outboxRows(tenant.id)).filter(
      (r) => (r.payload as { userId: string }).userId === user.id,
    )
    expect(mails).toHaveLength(1)
    expect(mails[0]).toMatchObject({ kind: 'invitation_email', status: 'queued', attempts: 0 })
    expect(mails[0]!.payload).toMatchObject({ to: user.email, tenantName: tenant.name, roleName: 'Agent' })
  })

  it('stores the optional fields as sent and keeps a webrtc extension first when none is given', async () => {
    const user = await insertUser(t.database.handle.db)
    const idp = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
    // A default identity provider must name an active provider of the tenant (docs/sso.md).
    await t.database.handle.db
      .insertInto('identity_providers')
      .values({
        id: idp,
        tenant_id: tenant.id,
        name: 'Okta',
        protocol: 'oidc',
        email_mapping: 'email',
        active: true,
        created: new Date(),
        created_by: user.id,
        updated: new Date(),
        updated_by: user.id,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute()
    const response = await invite(tenant.id, {
      email: user.email,
      noPassword: true,
      defaultIdentityProvider: idp,
      workStationId: 'WS-42',
      extensions: [{ type: 'pstn', value: '+15551234567', provider: 'carrier' }],
      surprise: 'ignored',
    })
    expect(response.status).toBe(201)
    const record = response.body.result
    expect(record).toMatchObject({ noPassword: true, defaultIdentityProvider: idp, workStationId: 'WS-42' })
    expect(record).not.toHaveProperty('surprise')
    expect(record.extensions.map((e: { type: string }) => e.type)).toEqual(['webrtc', 'pstn'])
    expect(record.extensions[1]).toEqual({
      type: 'pstn',
      value: '+15551234567',
      provider: 'carrier',
      region: '',
      sdkVersion: '',
      description: '',
    })
  })

  it('answers with the record exactly as a read of it returns it, for every status and kind of extensions', async () => {
    const pstn = { type: 'pstn', value: '+15551230000' }
    const webrtc = { type: 'webrtc', value: 'softphone-7', provider: 'vonage', region: 'eu' }
    for (const status of ['pending', 'invited', 'accepted']) {
      for (const extensions of [undefined, [pstn], [pstn, webrtc]]) {
        const user = await insertUser(t.database.handle.db)
        await t.database.handle.db
          .updateTable('users')
          .set({ first_name: 'Grace', last_name: `Hopper ${status}` })
          .where('id', '=', user.id)
          .execute()
        const created = await invite(tenant.id, {
          email: user.email,
          status,
          workStationId: 'WS-7',
          extensions,
        })
        const label = `${status} ${JSON.stringify(extensions)}`
        expect(created.status, label).toBe(201)
        const record = created.body.result
        const read = await t.request('GET', `/v1/tenants/${tenant.id}/users/${user.id}`, { token })
        expect(record, label).toEqual(read.body.result)
        expect(record, label).toMatchObject({ firstName: 'Grace', lastName: `Hopper ${status}` })
        // The default webrtc extension (the user's id) goes first only when no webrtc one is given.
        const first = extensions?.length === 2 ? 'softphone-7' : user.id
        expect(record.extensions[0].value, label).toBe(extensions?.length === 2 ? '+15551230000' : user.id)
        expect(record.extension, label).toBe(record.extensions[0].value)
        expect(record.activeExtension?.value ?? null, label).toBe(
          status === 'accepted' ? record.extensions[0].value : null,
        )
        expect(
          record.extensions.map((e: { value: string }) => e.value),
          label,
        ).toContain(first)
      }
    }
  })

  it("names the inviter in the e-mail by the inviter's current name", async () => {
    const renamed = `Renamed ${Date.now()}`
    const rename = await t.request('PUT', `/v1/users/${adminId}`, { token, body: { firstName: renamed } })
    expect(rename.status).toBe(200)
    const user = await insertUser(t.database.handle.db)
    expect((await invite(tenant.id, { email: user.email, status: 'invited' })).status).toBe(201)
    const mail = (await outboxRows(tenant.id)).find(
      (r) => (r.payload as { userId: string }).userId === user.id,
    )
    expect((mail!.payload as { inviterName: string }).inviterName).toMatch(new RegExp(`^${renamed}\\b`))
  })
})

describe('platformRoleId: the platform user is created with the invitation', () => {
  it('creates the user and the membership together', async () => {
    const email = uniqueEmail('new')
    const response = await invite(tenant.id, {
      email,
      platformRoleId: ROLE_IDS.platformUser,
      firstName: 'Ada',
      lastName: 'Lovelace',
      status: 'invited',
    })
    expect(response.status).toBe(201)
    expect(response.body.result).toMatchObject({
      email,
      firstName: 'Ada',
      lastName: 'Lovelace',
      status: 'invited',
    })
    const users = await t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, { token })
    expect(users.status).toBe(200)
    expect(users.body.result[0]).toMatchObject({
      id: response.body.result.userId,
      roleId: ROLE_IDS.platformUser,
      hasPassword: false,
    })
  })

  it('uses the existing user when the e-mail is known', async () => {
    const user = await insertUser(t.database.handle.db)
    const response = await invite(tenant.id, { email: user.email, platformRoleId: ROLE_IDS.platformUser })
    expect(response.status).toBe(201)
    expect(response.body.result.userId).toBe(user.id)
  })

  it('creates nothing when the invitation fails, and holds the platform role to the ceiling', async () => {
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const email = uniqueEmail('ceiling')
    // A tenant Administrator holds no platform permission: it cannot hand out Platform Administrator.
    const tooHigh = await invite(
      tenant.id,
      { email, platformRoleId: ROLE_IDS.platformAdministrator },
      admin.token,
    )
    expect(tooHigh.status).toBe(403)
    expect(tooHigh.body.error.reason).toBe('role_exceeds_caller')
    expect(tooHigh.body.error.attribute).toHaveProperty('platformRoleId')
    const tenantRole = await invite(tenant.id, { email, platformRoleId: ROLE_IDS.agent })
    expect(tenantRole.status).toBe(400)
    expect(tenantRole.body.error.attribute).toHaveProperty('platformRoleId')
    const badTenantRole = await invite(tenant.id, {
      email,
      platformRoleId: ROLE_IDS.platformUser,
      roleId: ROLE_IDS.platformUser,
    })
    expect(badTenantRole.status).toBe(400)
    expect((await t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, { token })).status).toBe(
      404,
    )

    // Within the ceiling, the tenant Administrator may create and invite a Platform User.
    const ok = await invite(tenant.id, { email, platformRoleId: ROLE_IDS.platformUser }, admin.token)
    expect(ok.status).toBe(201)
  })
})

describe('GET /v1/tenants/{tenantId}/users', () => {
  it('lists every user of the tenant, whatever the status, and pages with ?limit', async () => {
    const own = await createTenantAsAdmin(t)
    const ids: string[] = []
    for (const status of ['pending', 'invited', 'accepted']) {
      const user = await insertUser(t.database.handle.db)
      ids.push((await invite(own.id, { email: user.email, status })).body.result.userId)
    }
    const list = await t.request('GET', `/v1/tenants/${own.id}/users`, { token })
    expect(list.status).toBe(200)
    expect(list.body.result.map((u: { userId: string }) => u.userId).sort()).toEqual([...ids].sort())
    expect(list.body.result.map((u: { status: string }) => u.status).sort()).toEqual([
      'accepted',
      'invited',
      'pending',
    ])
    expect(list.body).not.toHaveProperty('nextCursor')

    const first = await t.request('GET', `/v1/tenants/${own.id}/users?limit=2`, { token })
    expect(first.body.result).toHaveLength(2)
    const rest = await t.request(
      'GET',
      `/v1/tenants/${own.id}/users?limit=2&cursor=${first.body.nextCursor}`,
      { token },
    )
    expect(rest.body.result).toHaveLength(1)
    expect([...first.body.result, ...rest.body.result].map((u: { userId: string }) => u.userId)).toEqual(
      list.body.result.map((u: { userId: string }) => u.userId),
    )
  })

  it('lets an Agent read (VIEW_ALL_USERS); 404 for a user who is not in the tenant', async () => {
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const one = await t.request('GET', `/v1/tenants/${tenant.id}/users/${agent.id}`, { token: agent.token })
    expect(one.status).toBe(200)
    expect(one.body.result).toMatchObject({ userId: agent.id, status: 'accepted', invitationToken: null })
    expect(one.headers.etag).toBeDefined()
    const stranger = await insertUser(t.database.handle.db)
    const missing = await t.request('GET', `/v1/tenants/${tenant.id}/users/${stranger.id}`, {
      token: agent.token,
    })
    expect(missing.status).toBe(404)
    expect(missing.body.error.reason).toBe('user_not_found')
  })
})
