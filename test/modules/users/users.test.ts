import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertUser, memberWithToken, uniqueEmail } from '../../helpers/fixtures.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'
import { expectNoSecrets, userRequests } from '../../helpers/users.js'

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

describe('POST /v1/users', () => {
  it('creates a user with every field of a platform user (docs/product.md#platform-users), typed and defaulted, and no tenant', async () => {
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
      // Its own unchanged roleId is no change (docs/api.md#platform-users); another role is.
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
