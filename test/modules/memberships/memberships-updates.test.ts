import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertUser, memberWithToken } from '../../helpers/fixtures.js'
import { membershipRequests } from '../../helpers/memberships.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Tenant users over HTTP (docs/api.md#tenant-users-and-invitations), what a PUT changes: the status moves, role changes within the
 * ceiling, the profile fields — the paths that succeed. Inviting and reading: memberships.test.ts.
 */

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/

const t = useTestApp()
let token: string
let tenant: { id: string; name: string }

beforeAll(async () => {
  token = await t.adminToken()
})
// Each test works in a tenant of its own.
beforeEach(async () => {
  tenant = await createTenantAsAdmin(t)
})
// Fixture users get a password_changed_at from the wall clock; keep the app's clock from lagging behind it.
beforeEach(() => t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime()))))

const { invite, update, outboxRows } = membershipRequests(
  () => t,
  () => token,
)

/** The tenants a user's login lists, with the permissions it has there. */
async function loginTenants(user: { email: string; password: string }) {
  const login = await t.request('POST', '/v1/login', { token: await t.tokenFor(user.email, user.password) })
  expect(login.status).toBe(200)
  return login.body.result.tenants as Array<{ tenantId: string; roleId: string; tenantPermissions: string[] }>
}

describe('PUT /v1/tenants/{tenantId}/users/{userId}: status moves', () => {
  async function pendingUser() {
    const user = await insertUser(t.database.handle.db)
    const response = await invite(tenant.id, { email: user.email })
    expect(response.status).toBe(201)
    return user
  }

  it('sends an invitation to a pending user, then cancels it', async () => {
    const user = await pendingUser()
    const sent = await update(tenant.id, user.id, { status: 'invited' })
    expect(sent.status).toBe(200)
    expect(sent.body.result).toMatchObject({
      status: 'invited',
      invitationStatus: 'invited',
      invitationEmailStatus: 'queued',
    })
    expect(sent.body.result.invitationExpiryDate).toMatch(ISO_Z)

    const cancelled = await update(tenant.id, user.id, { status: 'pending' })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.result).toMatchObject({
      status: 'pending',
      invitationStatus: 'pending',
      invitationExpiryDate: null,
      // The unsent mail went with the invitation it carried.
      invitationEmailStatus: null,
    })
    const mails = (await outboxRows(tenant.id)).filter((r) => (r.payload as any).userId === user.id)
    expect(mails).toEqual([])
  })

  it('accepts on an administrator’s word, disables and re-enables; permissions follow', async () => {
    const user = await pendingUser()
    const accepted = await update(tenant.id, user.id, { status: 'accepted' })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result).toMatchObject({ status: 'accepted', invitationStatus: 'enabled' })
    expect(accepted.body.result.activeExtension).toEqual(accepted.body.result.extensions[0])
    expect((await loginTenants(user)).map((m) => m.tenantId)).toEqual([tenant.id])

    const disabled = await update(tenant.id, user.id, { status: 'disabled' })
    expect(disabled.body.result).toMatchObject({ status: 'disabled', invitationStatus: 'disabled' })
    expect(await loginTenants(user)).toEqual([])

    const enabled = await update(tenant.id, user.id, { status: 'accepted' })
    expect(enabled.body.result).toMatchObject({ status: 'accepted', invitationStatus: 'enabled' })
    expect((await loginTenants(user)).map((m) => m.tenantId)).toEqual([tenant.id])

    const ssoOnly = await update(tenant.id, user.id, { noPassword: true })
    expect(ssoOnly.body.result.invitationStatus).toBe('sso-only')
  })

  it('treats the current status as no move', async () => {
    const user = await pendingUser()
    const same = await update(tenant.id, user.id, { status: 'pending' })
    expect(same.status).toBe(200)
    expect(same.body.result.status).toBe('pending')
  })
})

describe('PUT: roles and the ceiling', () => {
  it('changes the role; the member’s permissions follow at once', async () => {
    const user = await insertUser(t.database.handle.db)
    await invite(tenant.id, { email: user.email, status: 'accepted', roleId: ROLE_IDS.agent })
    const changed = await update(tenant.id, user.id, { roleId: ROLE_IDS.supervisor })
    expect(changed.status).toBe(200)
    expect(changed.body.result.roleId).toBe(ROLE_IDS.supervisor)
    expect((await loginTenants(user))[0]!.tenantPermissions).toContain('MANAGE_TENANT_ENROLLMENT')
  })

  it('never lets a Supervisor promote to Administrator or touch an Administrator', async () => {
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const agent = await insertUser(t.database.handle.db)
    await invite(tenant.id, { email: agent.email, status: 'accepted' })
    const promote = await update(tenant.id, agent.id, { roleId: ROLE_IDS.administrator }, supervisor.token)
    expect(promote.status).toBe(403)
    expect(promote.body.error.reason).toBe('role_exceeds_caller')
    expect(
      (await update(tenant.id, agent.id, { roleId: ROLE_IDS.supervisor }, supervisor.token)).status,
    ).toBe(200)

    const administrator = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const disable = await update(tenant.id, administrator.id, { status: 'disabled' }, supervisor.token)
    expect(disable.status).toBe(403)
    expect(disable.body.error.reason).toBe('role_exceeds_caller')
    expect((await loginTenants(administrator)).map((m) => m.tenantId)).toEqual([tenant.id])
  })
})

describe('PUT: profile fields', () => {
  it('replaces extensions, picks the active one by value, and checks the supervisor', async () => {
    const user = await insertUser(t.database.handle.db)
    await invite(tenant.id, { email: user.email })
    const pstn = {
      type: 'pstn',
      value: '+15557654321',
      provider: 'carrier',
      region: 'us',
      sdkVersion: '',
      description: 'Desk',
    }
    const early = await update(tenant.id, user.id, { activeExtension: '+15557654321', extensions: [pstn] })
    expect(early.status).toBe(400)
    expect(early.body.error.attribute).toHaveProperty('activeExtension')

    await update(tenant.id, user.id, { status: 'accepted' })
    const changed = await update(tenant.id, user.id, {
      extensions: [pstn],
      activeExtension: '+15557654321',
      workStationId: 'WS-7',
    })
    expect(changed.status).toBe(200)
    expect(changed.body.result.extensions.map((e: { type: string }) => e.type)).toEqual(['webrtc', 'pstn'])
    expect(changed.body.result.activeExtension).toEqual(pstn)
    expect(changed.body.result.extension).toBe('+15557654321')
    expect(changed.body.result.workStationId).toBe('WS-7')

    const unknown = await update(tenant.id, user.id, { activeExtension: '+19999999999' })
    expect(unknown.status).toBe(400)

    const stranger = await insertUser(t.database.handle.db)
    const badSupervisor = await update(tenant.id, user.id, { supervisorId: stranger.id })
    expect(badSupervisor.status).toBe(400)
    expect(badSupervisor.body.error.attribute).toHaveProperty('supervisorId')
    const boss = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const supervised = await update(tenant.id, user.id, { supervisorId: boss.id })
    expect(supervised.status).toBe(200)
    expect(supervised.body.result.supervisorId).toBe(boss.id)
  })
})
