import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { insertUser } from '../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../helpers/test-app.js'
import { createTestDatabase, onServerDatabase, type TestDatabase } from '../helpers/test-database.js'

/**
 * A revoked session's tokens are refused by every process on the database within a second
 * (docs/security.md, "How fast a revocation takes effect"). Two applications on one database — on
 * PostgreSQL each with its own connections, as two processes have — and one injected clock: the
 * revocation is made through one, the clock moves on by the refresh interval, and the other must refuse.
 * Each attack first uses the token on the other application, so that it holds a fresh copy of the
 * revocations from before the revocation: the copy it must not trust for more than a second.
 */
const REFRESH_INTERVAL_MS = 1_000
const clock = new ManualClock()
let database: TestDatabase
let one: TestApp
let other: TestApp

beforeAll(async () => {
  database = await createTestDatabase()
  one = await createTestApp({ database, clock })
  const secondHandle = onServerDatabase ? await database.connectAgain() : database.handle
  other = await createTestApp({ database: { ...database, handle: secondHandle }, clock })
})

afterAll(async () => {
  await other?.close()
  await one?.close()
  await database?.drop()
})

async function signedInOnBoth() {
  const person = await insertUser(database.handle.db)
  const token = await one.tokenFor(person.email, person.password)
  // The other application reads the revocations as they are now, and accepts the token.
  expect((await other.request('POST', '/v1/login', { token })).status).toBe(200)
  return { person, token }
}

async function expectRefusedByTheOtherAfterTheInterval(token: string) {
  clock.advance(REFRESH_INTERVAL_MS)
  const refused = await other.request('POST', '/v1/login', { token })
  expect(refused.status).toBe(401)
  expect(refused.body.error.reason).toBe('unauthorized')
}

describe('revocation across applications sharing one database', () => {
  it('a session signed out on one is refused on the other within the refresh interval', async () => {
    const { token } = await signedInOnBoth()
    const signOut = await one.request('DELETE', `/v1/me/sessions/${decodeJwt(token).sid}`, { token })
    expect(signOut.status).toBe(204)
    // The application that revoked it refuses it at once.
    expect((await one.request('POST', '/v1/login', { token })).status).toBe(401)
    await expectRefusedByTheOtherAfterTheInterval(token)
  })

  it('an administrator’s “sign out everywhere” reaches the other application', async () => {
    const { person, token } = await signedInOnBoth()
    const response = await one.request('DELETE', `/v1/users/${person.id}/sessions`, {
      token: await one.adminToken(),
    })
    expect(response.status).toBe(204)
    await expectRefusedByTheOtherAfterTheInterval(token)
  })

  it('a password changed or a person disabled on one application ends their tokens on the other', async () => {
    const changed = await signedInOnBoth()
    await one.request('PUT', `/v1/users/${changed.person.id}`, {
      token: await one.adminToken(),
      body: { password: 'a new one for everywhere' },
    })
    const disabled = await signedInOnBoth()
    await one.request('PUT', `/v1/users/${disabled.person.id}`, {
      token: await one.adminToken(),
      body: { status: 'disabled' },
    })
    clock.advance(REFRESH_INTERVAL_MS)
    for (const { token } of [changed, disabled])
      expect((await other.request('POST', '/v1/login', { token })).status).toBe(401)
  })

  it('a session revoked long before the other application first looked is refused there at once', async () => {
    const person = await insertUser(database.handle.db)
    const token = await one.tokenFor(person.email, person.password)
    await one.request('DELETE', '/v1/me/sessions', { authorization: basicOf(person) })
    const late = await createTestApp({ database, clock })
    try {
      expect((await late.request('POST', '/v1/login', { token })).status).toBe(401)
    } finally {
      await late.close()
    }
  })
})

function basicOf(person: { email: string; password: string }) {
  return `Basic ${Buffer.from(`${person.email}:${person.password}`).toString('base64')}`
}
