import { decodeJwt, SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertUser, memberWithToken } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'
import { TEST_TOKEN_SECRET } from '../../helpers/test-env.js'
import { supervisorAndOthers } from '../../helpers/users.js'

/** The attacks sessions stand against (docs/security.md, "Sessions"), each failing without its defence. */
const t = useTestApp()

const login = (token: string) => t.request('POST', '/v1/login', { token })

describe('sessions under attack', () => {
  it('refuses to end another person’s session by its id (404), which goes on working', async () => {
    const victim = await insertUser(t.database.handle.db)
    const attacker = await insertUser(t.database.handle.db)
    const victimToken = await t.tokenFor(victim.email, victim.password)
    const attackerToken = await t.tokenFor(attacker.email, attacker.password)
    const response = await t.request('DELETE', `/v1/me/sessions/${decodeJwt(victimToken).sid}`, {
      token: attackerToken,
    })
    expect(response.status).toBe(404)
    expect(response.body.error.reason).toBe('session_not_found')
    expect((await login(victimToken)).status).toBe(200)
    const list = await t.request('GET', '/v1/me/sessions', { token: attackerToken })
    expect(list.body.result.map((s: { id: string }) => s.id)).not.toContain(decodeJwt(victimToken).sid)
  })

  it('lets only who may manage a person sign them out: no permission 403, a stronger person 403, unseen 404', async () => {
    const { tenant, supervisor, member, stranger, boss } = await supervisorAndOthers(t)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const tokens = new Map<string, string>()
    for (const person of [member, stranger, boss])
      tokens.set(person.id, await t.tokenFor(person.email, person.password))

    const byAgent = await t.request('DELETE', `/v1/users/${member.id}/sessions`, { token: agent.token })
    expect(byAgent.status).toBe(403)
    expect(byAgent.body.error.reason).toBe('permission_denied')
    // A Supervisor manages the tenant's members, but not one whose platform role exceeds its own.
    const overBoss = await t.request('DELETE', `/v1/users/${boss.id}/sessions`, { token: supervisor.token })
    expect(overBoss.status).toBe(403)
    expect(overBoss.body.error.reason).toBe('role_exceeds_caller')
    const overStranger = await t.request('DELETE', `/v1/users/${stranger.id}/sessions`, {
      token: supervisor.token,
    })
    expect(overStranger.status).toBe(404)
    expect(overStranger.body.error.reason).toBe('user_not_found')
    for (const token of tokens.values()) expect((await login(token)).status).toBe(200)

    const overMember = await t.request('DELETE', `/v1/users/${member.id}/sessions`, {
      token: supervisor.token,
    })
    expect(overMember.status).toBe(204)
    expect((await login(tokens.get(member.id)!)).status).toBe(401)
  })

  it('ends every session when the password changes, the one that changed it too', async () => {
    const person = await insertUser(t.database.handle.db)
    const elsewhere = await t.tokenFor(person.email, person.password)
    const here = await t.tokenFor(person.email, person.password)
    const change = await t.request('PUT', `/v1/users/${person.id}`, {
      token: here,
      body: { password: 'a brand new passphrase', currentPassword: person.password },
    })
    expect(change.status).toBe(200)
    for (const token of [elsewhere, here]) expect((await login(token)).status).toBe(401)
    expect(await t.tokenFor(person.email, 'a brand new passphrase')).toBeTruthy()
  })

  it('ends every session when an administrator sets a new password, or erases the person', async () => {
    const admin = await t.adminToken()
    const reset = await insertUser(t.database.handle.db)
    const resetToken = await t.tokenFor(reset.email, reset.password)
    await t.request('PUT', `/v1/users/${reset.id}`, {
      token: admin,
      body: { password: 'set by the admin 1' },
    })
    expect((await login(resetToken)).status).toBe(401)

    const erased = await insertUser(t.database.handle.db)
    const erasedToken = await t.tokenFor(erased.email, erased.password)
    expect((await t.request('DELETE', `/v1/users/${erased.id}`, { token: admin })).status).toBe(204)
    expect((await login(erasedToken)).status).toBe(401)
  })

  it('never writes a session for a password the person no longer holds (a sign-in racing a change)', async () => {
    const person = await insertUser(t.database.handle.db)
    const { password_hash: checked } = await t.database.handle.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', person.id)
      .executeTakeFirstOrThrow()
    // The change commits between the sign-in's password check and its session.
    await t.request('PUT', `/v1/users/${person.id}`, {
      token: await t.adminToken(),
      body: { password: 'changed meanwhile 1' },
    })
    const client = { ip: null, userAgent: null }
    const late = await t.app.authenticator.sessions.start(
      { userId: person.id, authMethods: ['pwd'], passwordHash: checked ?? '', client },
      3600,
    )
    expect(late).toBeUndefined()
  })

  it('refuses a validly signed user token that names no session (the format before sessions)', async () => {
    const person = await insertUser(t.database.handle.db)
    const now = t.clock.now()
    const legacy = await new SignJWT({ typ: 'user', iatMs: now.getTime() })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(person.id)
      .setIssuedAt(Math.floor(now.getTime() / 1000))
      .setExpirationTime(Math.floor(now.getTime() / 1000) + 3600)
      .sign(new TextEncoder().encode(TEST_TOKEN_SECRET))
    const response = await login(legacy)
    expect(response.status).toBe(401)
    expect(response.body.error.reason).toBe('unauthorized')
  })

  it('refuses a signed token whose amr and single sign-on tenant disagree', async () => {
    const tenant = await createTenantAsAdmin(t)
    const person = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const now = Math.floor(t.clock.now().getTime() / 1000)
    // Signed with the right secret, but claiming a password sign-in while naming a tenant's provider.
    const mixed = await new SignJWT({
      typ: 'user',
      sid: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
      amr: ['pwd'],
      auth_time: now,
      sso: tenant.id,
      idp: tenant.id,
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(person.id)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(new TextEncoder().encode(TEST_TOKEN_SECRET))
    expect((await login(mixed)).status).toBe(401)
  })
})
