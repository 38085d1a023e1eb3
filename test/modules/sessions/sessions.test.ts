import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertUser } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Sessions, and what a token says of its sign-in (docs/security.md "Sessions", docs/api.md). */
const t = useTestApp()

const basic = (email: string, password: string) =>
  `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`

/** A person who signs in with a password from a browser of a given name. */
async function signIn(person: { email: string; password: string }, userAgent = 'Test browser') {
  const response = await t.request('POST', '/v1/tokens', {
    body: { username: person.email, password: person.password },
    headers: { 'user-agent': userAgent },
  })
  expect(response.status).toBe(200)
  return response.body.token as string
}

const mySessions = async (token: string) => (await t.request('GET', '/v1/me/sessions', { token })).body.result

describe('a token says how it was won', () => {
  it('carries amr pwd, auth_time in seconds and its session id; /v1/login shows authMethods', async () => {
    const person = await insertUser(t.database.handle.db)
    const token = await signIn(person)
    const claims = decodeJwt(token)
    expect(claims.amr).toEqual(['pwd'])
    expect(claims.auth_time).toBe(Math.floor(t.clock.now().getTime() / 1000))
    expect(claims.sid).toMatch(/^[0-9a-f-]{36}$/)
    const login = await t.request('POST', '/v1/login', { token })
    expect(login.body.result.authMethods).toEqual(['pwd'])
    const [session] = await mySessions(token)
    expect(session.id).toBe(claims.sid)
  })

  it('with Basic, which is no session, shows the password as how and lists no session as current', async () => {
    const person = await insertUser(t.database.handle.db)
    await signIn(person)
    const authorization = basic(person.email, person.password)
    const login = await t.request('POST', '/v1/login', { authorization })
    expect(login.body.result.authMethods).toEqual(['pwd'])
    const list = await t.request('GET', '/v1/me/sessions', { authorization })
    expect(list.body.result).toHaveLength(1)
    expect(list.body.result[0].current).toBe(false)
  })
})

describe('GET /v1/me/sessions', () => {
  it('lists one session per sign-in, newest first, with where it came from and which is current', async () => {
    const person = await insertUser(t.database.handle.db)
    const first = await signIn(person, 'Browser one')
    t.clock.advance(1_000)
    const second = await signIn(person, 'Browser two')
    const list = await mySessions(second)
    expect(list).toHaveLength(2)
    expect(list[0]).toMatchObject({ userAgent: 'Browser two', authMethods: ['pwd'], current: true })
    expect(list[1]).toMatchObject({ userAgent: 'Browser one', authMethods: ['pwd'], current: false })
    expect(list[0].ip).toBe('127.0.0.1')
    expect(list[1].created).toBe(list[1].lastSeen)
    expect((await mySessions(first)).map((s: { current: boolean }) => s.current)).toEqual([false, true])
  })

  it('moves lastSeen when a token of the session is used, to the minute', async () => {
    const person = await insertUser(t.database.handle.db)
    const token = await signIn(person)
    const [before] = await mySessions(token)
    t.clock.advance(90_000)
    expect((await t.request('POST', '/v1/login', { token })).status).toBe(200)
    const [after] = await mySessions(token)
    expect(after.created).toBe(before.created)
    expect(Date.parse(after.lastSeen)).toBe(t.clock.now().getTime())
  })

  it('answers 403 to an API key: sessions belong to people', async () => {
    const tenant = await createTenantAsAdmin(t)
    const key = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
      token: await t.adminToken(),
      body: { name: 'robot', roleId: ROLE_IDS.agent },
    })
    const authorization = basic(key.body.result.id, key.body.result.secret)
    const list = await t.request('GET', '/v1/me/sessions', { authorization })
    expect(list.status).toBe(403)
    expect(list.body.error.reason).toBe('permission_denied')
  })
})

describe('signing sessions out', () => {
  it('DELETE /v1/me/sessions/{id} ends that session: its token is refused, the list drops it', async () => {
    const person = await insertUser(t.database.handle.db)
    const laptop = await signIn(person, 'Laptop')
    const phone = await signIn(person, 'Phone')
    const phoneSession = decodeJwt(phone).sid
    const response = await t.request('DELETE', `/v1/me/sessions/${phoneSession}`, { token: laptop })
    expect(response.status).toBe(204)
    const refused = await t.request('POST', '/v1/login', { token: phone })
    expect(refused.status).toBe(401)
    expect(refused.body.error.reason).toBe('unauthorized')
    expect((await mySessions(laptop)).map((s: { userAgent: string }) => s.userAgent)).toEqual(['Laptop'])
    // Again: the session has ended, there is nothing to end.
    const again = await t.request('DELETE', `/v1/me/sessions/${phoneSession}`, { token: laptop })
    expect(again.status).toBe(404)
    expect(again.body.error.reason).toBe('session_not_found')
  })

  it('signs out the current session too: that is signing out', async () => {
    const person = await insertUser(t.database.handle.db)
    const token = await signIn(person)
    const response = await t.request('DELETE', `/v1/me/sessions/${decodeJwt(token).sid}`, { token })
    expect(response.status).toBe(204)
    expect((await t.request('POST', '/v1/login', { token })).status).toBe(401)
  })

  it('DELETE /v1/me/sessions ends every other session and keeps the current one', async () => {
    const person = await insertUser(t.database.handle.db)
    const others = [await signIn(person), await signIn(person)]
    const current = await signIn(person)
    expect((await t.request('DELETE', '/v1/me/sessions', { token: current })).status).toBe(204)
    for (const token of others) expect((await t.request('POST', '/v1/login', { token })).status).toBe(401)
    expect((await t.request('POST', '/v1/login', { token: current })).status).toBe(200)
    expect(await mySessions(current)).toHaveLength(1)
  })

  it('writes one session.revoked event naming the person and the sessions ended', async () => {
    const person = await insertUser(t.database.handle.db)
    const ended = [await signIn(person), await signIn(person)].map((token) => decodeJwt(token).sid)
    const current = await signIn(person)
    await t.request('DELETE', '/v1/me/sessions', { token: current })
    const events = await t.request('GET', `/v1/audit-events?action=session.revoked&targetId=${person.id}`, {
      token: await t.adminToken(),
    })
    expect(events.body.result).toHaveLength(1)
    const [event] = events.body.result
    expect(event).toMatchObject({
      actor: { type: 'user', id: person.id },
      target: { type: 'user', id: person.id },
    })
    expect([...event.changes.sessions[0]].sort()).toEqual([...ended].sort())
    expect(event.changes.sessions[1]).toEqual([])
  })

  it('DELETE /v1/users/{id}/sessions signs a person out everywhere; Basic, no session, still works', async () => {
    const person = await insertUser(t.database.handle.db)
    const tokens = [await signIn(person), await signIn(person)]
    const response = await t.request('DELETE', `/v1/users/${person.id}/sessions`, {
      token: await t.adminToken(),
    })
    expect(response.status).toBe(204)
    for (const token of tokens) expect((await t.request('POST', '/v1/login', { token })).status).toBe(401)
    const authorization = basic(person.email, person.password)
    expect((await t.request('POST', '/v1/login', { authorization })).status).toBe(200)
  })

  it('refuses oneself (409 self_lockout): one’s own are /v1/me/sessions, and nothing ends', async () => {
    const person = await insertUser(t.database.handle.db)
    const token = await signIn(person)
    const response = await t.request('DELETE', `/v1/users/${person.id}/sessions`, { token })
    expect(response.status).toBe(409)
    expect(response.body.error.reason).toBe('self_lockout')
    expect((await t.request('POST', '/v1/login', { token })).status).toBe(200)
  })
})
