import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../src/access/permissions.js'
import {
  createTenantAsAdmin,
  insertMembership,
  insertUser,
  memberWithToken,
  uniqueEmail,
} from './helpers/fixtures.js'
import { createTestApp, FollowingClock, type TestApp } from './helpers/test-app.js'
import { TEST_ADMIN } from './helpers/test-env.js'

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const USER_FIELDS = [
  'resetPasswordEmailStatus',
  'id',
  'email',
  'roleId',
  'additionalRoleIds',
  'firstName',
  'lastName',
  'externalId',
  'personalTelephone',
  'status',
  'aliasPlatformUserId',
  'defaultTenant',
  'hasPassword',
  'resetPasswordExpiryDate',
  'createdBy',
  'updatedBy',
  'created',
  'updated',
].sort()

let t: TestApp
let token: string
let adminId: string

beforeAll(async () => {
  t = await createTestApp({ clock: new FollowingClock() })
  token = await t.adminToken()
  adminId = (await t.request('POST', '/v1/login', { token })).body.result.userId
})
afterAll(() => t.close())

async function countUsers(): Promise<number> {
  const row = await t.database.handle.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

function createUser(body: Record<string, unknown>, as = token) {
  return t.request('POST', '/v1/users', { token: as, body: { roleId: ROLE_IDS.platformUser, ...body } })
}

/** No hash, secret or token may leave the service in a user record. */
function expectNoSecrets(body: unknown) {
  const text = JSON.stringify(body)
  expect(text).not.toMatch(/\$argon2/)
  expect(text).not.toMatch(/"(password|passwordHash|password_hash|token|secret|secretHash)"/i)
}

describe('POST /v1/users', () => {
  it('creates a user with every SPEC §2.2 field, typed and defaulted, and no tenant', async () => {
    const email = uniqueEmail('Ada')
    const response = await createUser({ email: `  ${email.toUpperCase()}`.trim(), firstName: 'Ada' })
    expect(response.status).toBe(201)
    const user = response.body.result
    expect(response.headers.location).toBe(`/v1/users/${user.id}`)
    expect(Object.keys(user).sort()).toEqual(USER_FIELDS)
    expect(user.id).toMatch(UUID)
    expect(user.email).toBe(email.toLowerCase())
    expect(user.roleId).toBe(ROLE_IDS.platformUser)
    expect(user.additionalRoleIds).toEqual([])
    expect(user.firstName).toBe('Ada')
    expect(user.lastName).toBe('')
    expect(user.externalId).toBe('')
    expect(user.personalTelephone).toBeNull()
    expect(user.status).toBe('enabled')
    expect(typeof user.aliasPlatformUserId).toBe('string')
    expect(user.aliasPlatformUserId).toMatch(/^[1-9][0-9]*$/)
    expect(user.defaultTenant).toBeNull()
    expect(user.hasPassword).toBe(false)
    expect(user.resetPasswordExpiryDate).toBeNull()
    expect(user.createdBy).toBe(adminId)
    expect(user.updatedBy).toBe(adminId)
    expect(user.created).toMatch(ISO_Z)
    expect(user.created).toBe(user.updated)
    expectNoSecrets(response.body)

    const memberships = await t.database.handle.db
      .selectFrom('tenant_users')
      .select('tenant_id')
      .where('user_id', '=', user.id)
      .execute()
    expect(memberships).toEqual([])

    const read = await t.request('GET', `/v1/users/${user.id}`, { token })
    expect(read.status).toBe(200)
    expect(read.body.result).toEqual(user)
  })

  it('stores every optional field as sent', async () => {
    const response = await createUser({
      email: uniqueEmail(),
      firstName: 'Grace',
      lastName: 'Hopper',
      externalId: 'crm-42',
      status: 'pending',
      personalTelephone: '+353861234567',
      additionalRoleIds: [ROLE_IDS.platformUser],
    })
    expect(response.status).toBe(201)
    expect(response.body.result).toMatchObject({
      firstName: 'Grace',
      lastName: 'Hopper',
      externalId: 'crm-42',
      status: 'pending',
      personalTelephone: '+353861234567',
      additionalRoleIds: [ROLE_IDS.platformUser],
    })
  })

  it('never returns a hash, even for a user with a password', async () => {
    const found = await t.request('GET', `/v1/users?email=${encodeURIComponent(TEST_ADMIN.email)}`, { token })
    expect(found.status).toBe(200)
    expect(found.body.result[0].hasPassword).toBe(true)
    expectNoSecrets(found.body)
  })

  it('refuses an e-mail that differs only in case with 409 email_taken', async () => {
    const email = uniqueEmail('Case')
    expect((await createUser({ email })).status).toBe(201)
    const again = await createUser({ email: email.toUpperCase() })
    expect(again.status).toBe(409)
    expect(again.body.error.reason).toBe('email_taken')
    expect(again.body.error.message).toContain('already exists')
    expect(again.body.error.attribute).toEqual({ email: 'already exists' })
  })

  it('lets exactly one of 20 concurrent creates of one e-mail (differing in case) win', async () => {
    const email = uniqueEmail('Race')
    const before = await countUsers()
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        createUser({ email: i % 2 ? email.toUpperCase() : email.replace(/^r/, 'R') }),
      ),
    )
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1)
    const losers = responses.filter((r) => r.status !== 201)
    expect(losers).toHaveLength(19)
    for (const loser of losers) expect(loser.body.error.reason).toBe('email_taken')
    expect(await countUsers()).toBe(before + 1)
  })

  it('issues 200 distinct aliasPlatformUserId values to 200 concurrent creates', async () => {
    const responses = await Promise.all(
      Array.from({ length: 200 }, () => createUser({ email: uniqueEmail() })),
    )
    expect(responses.map((r) => r.status)).toEqual(Array(200).fill(201))
    const aliases = responses.map((r) => r.body.result.aliasPlatformUserId as string)
    for (const alias of aliases) expect(alias).toMatch(/^[1-9][0-9]*$/)
    expect(new Set(aliases).size).toBe(200)
  }, 120_000)

  it.each([
    ['an e-mail without @', { email: 'not-an-email' }, 'email'],
    ['an e-mail without a dotted domain', { email: 'someone@localhost' }, 'email'],
    ['an e-mail with a space', { email: 'some one@example.test' }, 'email'],
    ['an e-mail with two @', { email: 'two@@example.test' }, 'email'],
    ['an e-mail over 254 characters', { email: `${'a'.repeat(250)}@example.test` }, 'email'],
    ['a missing e-mail', { email: undefined }, 'email'],
    ['a telephone without +', { personalTelephone: '353861234567' }, 'personalTelephone'],
    ['a telephone with letters', { personalTelephone: '+1555CALLNOW' }, 'personalTelephone'],
    ['a telephone over 15 digits', { personalTelephone: '+1234567890123456' }, 'personalTelephone'],
    ['a telephone with a leading 0', { personalTelephone: '+0861234567' }, 'personalTelephone'],
    ['a telephone of one digit', { personalTelephone: '+1' }, 'personalTelephone'],
    ['an unknown role', { roleId: '00000000-0000-4000-8000-000000000000' }, 'roleId'],
    ['a tenant role as the platform role', { roleId: ROLE_IDS.supervisor }, 'roleId'],
    ['a role id that is not a UUID', { roleId: 'admin' }, 'roleId'],
    ['a missing role', { roleId: undefined }, 'roleId'],
    [
      'a tenant role among additionalRoleIds',
      { additionalRoleIds: [ROLE_IDS.platformUser, ROLE_IDS.agent] },
      'additionalRoleIds[1]',
    ],
    [
      'an unknown role among additionalRoleIds',
      { additionalRoleIds: ['00000000-0000-4000-8000-000000000000'] },
      'additionalRoleIds[0]',
    ],
    ['a 10,000-character first name', { firstName: 'x'.repeat(10_000) }, 'firstName'],
    ['a last name with a control character', { lastName: 'Bad\u0000Name' }, 'lastName'],
    ['an unknown status', { status: 'active' }, 'status'],
    ['a boolean status', { status: true }, 'status'],
  ])('answers 400 naming the field for %s, and stores nothing', async (_label, change, field) => {
    const before = await countUsers()
    const body: Record<string, unknown> = { email: uniqueEmail(), roleId: ROLE_IDS.platformUser, ...change }
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key]
    const response = await t.request('POST', '/v1/users', { token, body })
    expect(response.status).toBe(400)
    expect(response.body.error.reason).toBe('validation_failed')
    expect(response.body.error.code).toBe(400)
    expect(response.body.error.attribute).toHaveProperty([field])
    expect(await countUsers()).toBe(before)
  })

  it('ignores unknown and read-only fields', async () => {
    const response = await createUser({
      email: uniqueEmail(),
      id: '00000000-0000-4000-8000-000000000000',
      aliasPlatformUserId: '1',
      hasPassword: true,
      password: 'sneaky-password',
      color: 'red',
    })
    expect(response.status).toBe(201)
    expect(response.body.result.id).not.toBe('00000000-0000-4000-8000-000000000000')
    expect(response.body.result.hasPassword).toBe(false)
    expect(response.body.result).not.toHaveProperty('color')
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

  it('lets a tenant Supervisor create a Platform User, recorded as the creator', async () => {
    const tenant = await createTenantAsAdmin(t)
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const response = await createUser({ email: uniqueEmail() }, supervisor.token)
    expect(response.status).toBe(201)
    expect(response.body.result.createdBy).toBe(supervisor.id)
  })
})

describe('GET /v1/users', () => {
  it('finds a user by e-mail in any case, and answers 404 user_not_found when there is none', async () => {
    const email = uniqueEmail('Find')
    const created = (await createUser({ email })).body.result
    const found = await t.request('GET', `/v1/users?email=${encodeURIComponent(email.toUpperCase())}`, {
      token,
    })
    expect(found.status).toBe(200)
    expect(found.body.result).toEqual([created])

    const missing = await t.request('GET', `/v1/users?email=${encodeURIComponent(uniqueEmail('nobody'))}`, {
      token,
    })
    expect(missing.status).toBe(404)
    expect(missing.body.error.reason).toBe('user_not_found')
  })

  it('answers 404 for an unknown id and 400 for an id that is not a UUID', async () => {
    const unknown = await t.request('GET', '/v1/users/00000000-0000-4000-8000-000000000000', { token })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.reason).toBe('user_not_found')
    const bad = await t.request('GET', '/v1/users/not-a-uuid', { token })
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('userId')
  })

  it('lists every user for a platform administrator, in pages', async () => {
    const all = await t.request('GET', '/v1/users', { token })
    expect(all.status).toBe(200)
    expect(all.body.result.length).toBe(await countUsers())
    const first = await t.request('GET', '/v1/users?limit=2', { token })
    expect(first.body.result).toHaveLength(2)
    const second = await t.request('GET', `/v1/users?limit=2&cursor=${first.body.nextCursor}`, { token })
    expect(second.body.result.map((u: { id: string }) => u.id)).toEqual(
      all.body.result.slice(2, 4).map((u: { id: string }) => u.id),
    )
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

describe('PUT /v1/users/{id}', () => {
  it('lets a user change its own names but nothing else', async () => {
    const plain = await insertUser(t.database.handle.db)
    const plainToken = await t.tokenFor(plain.email, plain.password)
    t.clock.advance(1_000)
    const names = await t.request('PUT', `/v1/users/${plain.id}`, {
      token: plainToken,
      body: { firstName: 'Alan', lastName: 'Turing', id: 'ignored' },
    })
    expect(names.status).toBe(200)
    expect(names.body.result).toMatchObject({ firstName: 'Alan', lastName: 'Turing', updatedBy: plain.id })
    expect(names.body.result.updated).not.toBe(names.body.result.created)

    for (const body of [
      { externalId: 'x' },
      { status: 'disabled' },
      { personalTelephone: '+15551234567' },
      // Its own unchanged roleId is no change (API.md §10); another role is.
      { roleId: ROLE_IDS.platformAdministrator },
    ]) {
      const refused = await t.request('PUT', `/v1/users/${plain.id}`, { token: plainToken, body })
      expect(refused.status).toBe(403)
      expect(refused.body.error.reason).toBe('permission_denied')
    }
    const read = await t.request('GET', `/v1/users/${plain.id}`, { token })
    expect(read.body.result).toMatchObject({ externalId: '', status: 'enabled', personalTelephone: null })
  })

  it('lets an administrator change every field, with the same validation as create', async () => {
    const tenant = await createTenantAsAdmin(t)
    const user = (await createUser({ email: uniqueEmail() })).body.result
    const response = await t.request('PUT', `/v1/users/${user.id}`, {
      token,
      body: {
        firstName: 'Edsger',
        externalId: 'ext-9',
        personalTelephone: '+31201234567',
        defaultTenant: tenant.id,
        status: 'invited',
        additionalRoleIds: [ROLE_IDS.platformUser],
      },
    })
    expect(response.status).toBe(200)
    expect(response.body.result).toMatchObject({
      firstName: 'Edsger',
      externalId: 'ext-9',
      personalTelephone: '+31201234567',
      defaultTenant: tenant.id,
      status: 'invited',
      additionalRoleIds: [ROLE_IDS.platformUser],
      aliasPlatformUserId: user.aliasPlatformUserId,
      created: user.created,
    })
    for (const [body, field] of [
      [{ personalTelephone: '0861234567' }, 'personalTelephone'],
      [{ roleId: ROLE_IDS.agent }, 'roleId'],
      [{ defaultTenant: '00000000-0000-4000-8000-000000000000' }, 'defaultTenant'],
      [{ firstName: 'y'.repeat(10_000) }, 'firstName'],
    ] as const) {
      const bad = await t.request('PUT', `/v1/users/${user.id}`, { token, body })
      expect(bad.status).toBe(400)
      expect(bad.body.error.attribute).toHaveProperty([field])
    }
    const unchanged = await t.request('GET', `/v1/users/${user.id}`, { token })
    expect(unchanged.body.result).toEqual(response.body.result)
  })

  it('refuses to authenticate a user once disabled, and again after re-enabling', async () => {
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
    expect((await t.request('POST', '/v1/login', { token: personToken })).status).toBe(200)
  })

  it('lets a tenant Supervisor manage members of its tenant only, never someone above it', async () => {
    const tenant = await createTenantAsAdmin(t)
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const member = await insertUser(t.database.handle.db)
    const outsider = await insertUser(t.database.handle.db)
    const boss = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: member.id,
      roleId: ROLE_IDS.agent,
    })
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: boss.id,
      roleId: ROLE_IDS.agent,
    })
    t.ctx.access.invalidate()

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

  it('answers the ETag of the record and 412 to a PUT whose If-Match is stale', async () => {
    const user = (await createUser({ email: uniqueEmail() })).body.result
    const read = await t.request('GET', `/v1/users/${user.id}`, { token })
    const etag = read.headers.etag as string
    expect(etag).toMatch(/^(W\/)?"[^"]+"$/)
    t.clock.advance(1_000)
    const first = await t.request('PUT', `/v1/users/${user.id}`, {
      token,
      body: { firstName: 'One' },
      headers: { 'if-match': etag },
    })
    expect(first.status).toBe(200)
    expect(first.headers.etag).not.toBe(etag)
    const stale = await t.request('PUT', `/v1/users/${user.id}`, {
      token,
      body: { firstName: 'Two' },
      headers: { 'if-match': etag },
    })
    expect(stale.status).toBe(412)
    expect(stale.body.error.reason).toBe('precondition_failed')
    const now = await t.request('GET', `/v1/users/${user.id}`, { token })
    expect(now.body.result.firstName).toBe('One')
  })
})
