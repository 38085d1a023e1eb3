import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { insertUser, uniqueEmail } from '../../helpers/fixtures.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'
import { supervisorAndOthers } from '../../helpers/users.js'

const t = useTestApp({ clock: new FollowingClock() })
let adminToken: string

beforeAll(async () => {
  adminToken = await t.adminToken()
})

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

async function storedHash(userId: string): Promise<string | null> {
  const row = await t.database.handle.db
    .selectFrom('users')
    .select('password_hash')
    .where('id', '=', userId)
    .executeTakeFirstOrThrow()
  return row.password_hash
}

function login(username: string, password: string) {
  return t.request('POST', '/v1/tokens', { body: { username, password } })
}

describe('changing one’s own password', () => {
  it('kills the old token and the old password; the new password works', async () => {
    const user = await insertUser(t.database.handle.db)
    const oldToken = await t.tokenFor(user.email, user.password)
    expect((await t.request('POST', '/v1/login', { token: oldToken })).status).toBe(200)
    // The Basic check is cached after success: the change must drop that too.
    expect(
      (await t.request('POST', '/v1/login', { authorization: basic(user.email, user.password) })).status,
    ).toBe(200)

    t.clock.advance(1_000)
    const newPassword = 'a brand new passphrase'
    const change = await t.request('PUT', `/v1/users/${user.id}`, {
      token: oldToken,
      body: { password: newPassword, currentPassword: user.password },
    })
    expect(change.status).toBe(200)
    expect(change.body.result.hasPassword).toBe(true)
    expect(JSON.stringify(change.body)).not.toContain(newPassword)
    expect(await storedHash(user.id)).toMatch(/^\$argon2id\$/)

    const stale = await t.request('POST', '/v1/login', { token: oldToken })
    expect(stale.status).toBe(401)
    expect(stale.body.error.reason).toBe('unauthorized')
    expect((await login(user.email, user.password)).status).toBe(401)
    expect(
      (await t.request('POST', '/v1/login', { authorization: basic(user.email, user.password) })).status,
    ).toBe(401)

    const fresh = await login(user.email, newPassword)
    expect(fresh.status).toBe(200)
    expect((await t.request('POST', '/v1/login', { token: fresh.body.token })).status).toBe(200)
    expect(
      (await t.request('POST', '/v1/login', { authorization: basic(user.email, newPassword) })).status,
    ).toBe(200)
  })

  it('needs the right currentPassword and a valid new one, and changes nothing otherwise', async () => {
    const user = await insertUser(t.database.handle.db)
    const token = await t.tokenFor(user.email, user.password)
    const before = await storedHash(user.id)
    for (const [body, field] of [
      [{ password: 'another passphrase' }, 'currentPassword'],
      [{ password: 'another passphrase', currentPassword: 'not the password' }, 'currentPassword'],
      [{ password: 'short', currentPassword: user.password }, 'password'],
      [{ password: 'p'.repeat(257), currentPassword: user.password }, 'password'],
    ] as const) {
      const response = await t.request('PUT', `/v1/users/${user.id}`, { token, body })
      expect(response.status).toBe(400)
      expect(response.body.error.reason).toBe('validation_failed')
      expect(response.body.error.attribute).toHaveProperty([field])
    }
    expect(await storedHash(user.id)).toBe(before)
    expect((await t.request('POST', '/v1/login', { token })).status).toBe(200)
    expect((await login(user.email, user.password)).status).toBe(200)
  })

  it('asks for currentPassword even from an administrator changing its own', async () => {
    const admin = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const token = await t.tokenFor(admin.email, admin.password)
    const response = await t.request('PUT', `/v1/users/${admin.id}`, {
      token,
      body: { password: 'without proving it' },
    })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('currentPassword')
  })
})

describe('setting another user’s password', () => {
  it('lets an administrator give a new user its first password, and reset it later', async () => {
    const email = uniqueEmail()
    const created = await t.request('POST', '/v1/users', {
      token: adminToken,
      body: { email, roleId: ROLE_IDS.platformUser },
    })
    expect(created.body.result.hasPassword).toBe(false)
    expect((await login(email, 'first password here')).status).toBe(401)

    const set = await t.request('PUT', `/v1/users/${created.body.result.id}`, {
      token: adminToken,
      body: { password: 'first password here' },
    })
    expect(set.status).toBe(200)
    expect(set.body.result.hasPassword).toBe(true)
    const first = await login(email, 'first password here')
    expect(first.status).toBe(200)

    t.clock.advance(1_000)
    const reset = await t.request('PUT', `/v1/users/${created.body.result.id}`, {
      token: adminToken,
      body: { password: 'second password here' },
    })
    expect(reset.status).toBe(200)
    expect((await t.request('POST', '/v1/login', { token: first.body.token })).status).toBe(401)
    expect((await login(email, 'first password here')).status).toBe(401)
    expect((await login(email, 'second password here')).status).toBe(200)
  })

  it('refuses a Supervisor resetting the password of a Platform Administrator, or of a stranger', async () => {
    const { supervisor, boss, stranger } = await supervisorAndOthers(t)

    const above = await t.request('PUT', `/v1/users/${boss.id}`, {
      token: supervisor.token,
      body: { password: 'taken over now' },
    })
    expect(above.status).toBe(403)
    expect(above.body.error.reason).toBe('role_exceeds_caller')
    const hidden = await t.request('PUT', `/v1/users/${stranger.id}`, {
      token: supervisor.token,
      body: { password: 'taken over now' },
    })
    expect(hidden.status).toBe(404)
    expect((await login(boss.email, boss.password)).status).toBe(200)
    expect((await login(stranger.email, stranger.password)).status).toBe(200)
  })
})
