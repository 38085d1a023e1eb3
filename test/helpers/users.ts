import { expect } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser, memberWithToken } from './fixtures.js'
import type { TestApp } from './test-app.js'

/**
 * The platform-user requests the users tests share, for the test file's app and default token (set in
 * its beforeAll, hence the getters). `countUsers` is the one named look into the database, where a test
 * must see that a refused create wrote nothing.
 */
export function userRequests(app: () => TestApp, defaultToken: () => string) {
  return {
    createUser(body: Record<string, unknown>, as = defaultToken()) {
      return app().request('POST', '/v1/users', {
        token: as,
        body: { roleId: ROLE_IDS.platformUser, ...body },
      })
    },
    async countUsers(): Promise<number> {
      const row = await app()
        .database.handle.db.selectFrom('users')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },
  }
}

/** No hash, secret or token may leave the service in a user record. */
export function expectNoSecrets(body: unknown): void {
  const text = JSON.stringify(body)
  expect(text).not.toMatch(/\$argon2/)
  expect(text).not.toMatch(/"(password|passwordHash|password_hash|token|secret|secretHash)"/i)
}

/**
 * A tenant whose Supervisor acts on people around it: `member` (an Agent there), `boss` (a Platform
 * Administrator who is an Agent there too) and `stranger` (no membership in it).
 */
export async function supervisorAndOthers(t: TestApp) {
  const db = t.database.handle.db
  const tenant = await createTenantAsAdmin(t)
  const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
  const member = await insertUser(db)
  const stranger = await insertUser(db)
  const boss = await insertUser(db, { roleId: ROLE_IDS.platformAdministrator })
  for (const person of [member, boss])
    await insertMembership(db, { tenantId: tenant.id, userId: person.id, roleId: ROLE_IDS.agent })
  t.ctx.access.invalidate()
  return { tenant, supervisor, member, stranger, boss }
}
