import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import {
  createTenantAsAdmin,
  insertMembership,
  insertUser,
  memberWithToken,
  uniqueEmail,
} from '../../helpers/fixtures.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'
import { expectNoSecrets, supervisorAndOthers, userRequests } from '../../helpers/users.js'

/**
 * Platform users (docs/product.md#permissions, docs/api.md#platform-users): who may create, change and read whom; no hash or secret ever leaves;
 * a disabled user cannot authenticate. The tenant-scoped checks of helpers/security-checks.ts apply to
 * tenant routes; platform users are seen through memberships (a user outside the caller's tenants is 404).
 */

const t = useTestApp({ clock: new FollowingClock() })
let token: string
let adminId: string

beforeAll(async () => {
  token = await t.adminToken()
  adminId = (await t.request('POST', '/v1/login', { token })).body.result.userId
})

const { createUser, countUsers } = userRequests(
  () => t,
  () => token,
)

describe('users: who may create, change and read whom', () => {
  it('never returns a hash, even for a user with a password', async () => {
    const found = await t.request('GET', `/v1/users?email=${encodeURIComponent(TEST_ADMIN.email)}`, { token })
    expect(found.status).toBe(200)
    expect(found.body.result[0].hasPassword).toBe(true)
    expectNoSecrets(found.body)
  })
  it('answers 403 permission_denied to a caller without MANAGE_ALL_USERS anywhere', async () => {
    const tenant = await createTenantAsAdmin(t)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const plain = await insertUser(t.database.handle.db)
    const plainToken = await t.tokenFor(plain.email, plain.password)
    for (const caller of [agent.token, plainToken]) {
      const before = await countUsers()
      const response = await createUser({ email: uniqueEmail() }, caller)
      expect(response.status).toBe(403)
      expect(response.body.error.reason).toBe('permission_denied')
      expect(await countUsers()).toBe(before)
    }
  })
  it('refuses a user once disabled; re-enabling lets it sign in again but ends nothing less', async () => {
    const person = await insertUser(t.database.handle.db)
    const personToken = await t.tokenFor(person.email, person.password)
    const basic = `Basic ${Buffer.from(`${person.email}:${person.password}`).toString('base64')}`
    expect((await t.request('POST', '/v1/login', { authorization: basic })).status).toBe(200)

    const off = await t.request('PUT', `/v1/users/${person.id}`, { token, body: { status: 'disabled' } })
    expect(off.status).toBe(200)
    expect((await t.request('POST', '/v1/login', { token: personToken })).status).toBe(401)
    expect((await t.request('POST', '/v1/login', { authorization: basic })).status).toBe(401)
    const login = await t.request('POST', '/v1/tokens', {
      body: { username: person.email, password: person.password },
    })
    expect(login.status).toBe(401)

    await t.request('PUT', `/v1/users/${person.id}`, { token, body: { status: 'enabled' } })
    // Disabling ended the person's sessions (docs/security.md): the old token stays dead, a new sign-in works.
    expect((await t.request('POST', '/v1/login', { token: personToken })).status).toBe(401)
    expect((await t.request('POST', '/v1/login', { authorization: basic })).status).toBe(200)
    const again = await t.tokenFor(person.email, person.password)
    expect((await t.request('POST', '/v1/login', { token: again })).status).toBe(200)
  })
  it('lets a tenant Supervisor manage members of its tenant only, never someone above it', async () => {
    const { supervisor, member, stranger: outsider, boss } = await supervisorAndOthers(t)

    const ok = await t.request('PUT', `/v1/users/${member.id}`, {
      token: supervisor.token,
      body: { externalId: 'badge-7' },
    })
    expect(ok.status).toBe(200)
    expect(ok.body.result.externalId).toBe('badge-7')

    const hidden = await t.request('PUT', `/v1/users/${outsider.id}`, {
      token: supervisor.token,
      body: { externalId: 'x' },
    })
    expect(hidden.status).toBe(404)

    const above = await t.request('PUT', `/v1/users/${boss.id}`, {
      token: supervisor.token,
      body: { status: 'disabled' },
    })
    expect(above.status).toBe(403)
    expect(above.body.error.reason).toBe('role_exceeds_caller')
    const bossRead = await t.request('GET', `/v1/users/${boss.id}`, { token })
    expect(bossRead.body.result.status).toBe('enabled')
  })
})

describe('who may read which user', () => {
  it('shows a tenant-level reader itself and the members of its tenants and sub-tenants, nobody else', async () => {
    const tenant = await createTenantAsAdmin(t)
    const sub = await createTenantAsAdmin(t, { parentId: tenant.id })
    const elsewhere = await createTenantAsAdmin(t)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const colleague = await insertUser(t.database.handle.db)
    const subMember = await insertUser(t.database.handle.db)
    const stranger = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: colleague.id,
      roleId: ROLE_IDS.agent,
      status: 'pending',
    })
    await insertMembership(t.database.handle.db, {
      tenantId: sub.id,
      userId: subMember.id,
      roleId: ROLE_IDS.agent,
    })
    await insertMembership(t.database.handle.db, {
      tenantId: elsewhere.id,
      userId: stranger.id,
      roleId: ROLE_IDS.agent,
    })
    t.ctx.access.invalidate()

    const list = await t.request('GET', '/v1/users', { token: agent.token })
    expect(list.status).toBe(200)
    expect(list.body.result.map((u: { id: string }) => u.id).sort()).toEqual(
      [agent.id, colleague.id, subMember.id].sort(),
    )
    expect((await t.request('GET', `/v1/users/${colleague.id}`, { token: agent.token })).status).toBe(200)
    expect((await t.request('GET', `/v1/users/${subMember.id}`, { token: agent.token })).status).toBe(200)
    const hidden = await t.request('GET', `/v1/users/${stranger.id}`, { token: agent.token })
    expect(hidden.status).toBe(404)
    expect(hidden.body.error.reason).toBe('user_not_found')
    // An Agent cannot invite, so it cannot look strangers up by e-mail either.
    const byEmail = await t.request('GET', `/v1/users?email=${encodeURIComponent(stranger.email)}`, {
      token: agent.token,
    })
    expect(byEmail.status).toBe(404)
  })

  it('lets a caller who can invite look a user up by exact e-mail, without listing strangers', async () => {
    const tenant = await createTenantAsAdmin(t)
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const stranger = await insertUser(t.database.handle.db)
    const byEmail = await t.request('GET', `/v1/users?email=${encodeURIComponent(stranger.email)}`, {
      token: supervisor.token,
    })
    expect(byEmail.status).toBe(200)
    expect(byEmail.body.result.map((u: { id: string }) => u.id)).toEqual([stranger.id])
    const list = await t.request('GET', '/v1/users', { token: supervisor.token })
    expect(list.body.result.map((u: { id: string }) => u.id)).not.toContain(stranger.id)
    expect((await t.request('GET', `/v1/users/${stranger.id}`, { token: supervisor.token })).status).toBe(404)
  })

  it('shows a user without permissions only itself', async () => {
    const plain = await insertUser(t.database.handle.db)
    const plainToken = await t.tokenFor(plain.email, plain.password)
    const list = await t.request('GET', '/v1/users', { token: plainToken })
    expect(list.body.result.map((u: { id: string }) => u.id)).toEqual([plain.id])
    expect((await t.request('GET', `/v1/users/${plain.id}`, { token: plainToken })).status).toBe(200)
    expect((await t.request('GET', `/v1/users/${adminId}`, { token: plainToken })).status).toBe(404)
  })
})
