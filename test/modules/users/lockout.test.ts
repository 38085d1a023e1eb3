import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { AppError } from '../../../src/errors.js'
import { checkAnAdministratorRemains } from '../../../src/modules/users/lockout-guard.js'
import { insertUser } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * Nobody locks the platform out (issue 29 item 5): nobody disables, demotes or erases themselves, and the
 * last Platform Administrator who can sign in is neither disabled nor demoted by anyone — 409 with a
 * reason of the closed list.
 */
let t: TestApp

beforeAll(async () => {
  t = await createTestApp()
})
afterAll(async () => {
  await t.close()
})

async function administrator() {
  const user = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
  return { ...user, token: await t.tokenFor(user.email, user.password) }
}

async function administratorsWhoCanSignIn(): Promise<string[]> {
  const rows = await t.database.handle.db
    .selectFrom('users')
    .select('id')
    .where('role_id', '=', ROLE_IDS.platformAdministrator)
    .where('status', 'not in', ['disabled', 'erased'])
    .execute()
  return rows.map((row) => row.id)
}

describe('nobody locks themselves out', () => {
  it('refuses the only administrator disabling, demoting or erasing itself, and it can still act', async () => {
    const token = await t.adminToken()
    const me = (await t.request('POST', '/v1/login', { token })).body.result.userId as string

    const disable = await t.request('PUT', `/v1/users/${me}`, { token, body: { status: 'disabled' } })
    expect(disable.status).toBe(409)
    expect(disable.body.error).toMatchObject({
      reason: 'self_lockout',
      attribute: { status: expect.any(String) },
    })
    expect(disable.headers['x-request-id']).toBeDefined()

    const demote = await t.request('PUT', `/v1/users/${me}`, {
      token,
      body: { roleId: ROLE_IDS.platformUser },
    })
    expect(demote.status).toBe(409)
    expect(demote.body.error).toMatchObject({
      reason: 'self_lockout',
      attribute: { roleId: expect.any(String) },
    })

    const erase = await t.request('DELETE', `/v1/users/${me}`, { token })
    expect(erase.status).toBe(409)
    expect(erase.body.error.reason).toBe('self_lockout')

    // Nothing changed: the administrator still acts, and may save its record with its own status and role.
    const read = await t.request('GET', `/v1/users/${me}`, { token })
    expect(read.body.result).toMatchObject({ status: 'enabled', roleId: ROLE_IDS.platformAdministrator })
    const save = await t.request('PUT', `/v1/users/${me}`, {
      token,
      body: { status: 'enabled', roleId: ROLE_IDS.platformAdministrator, firstName: 'Still' },
    })
    expect(save.status).toBe(200)
  })

  it('refuses an administrator disabling itself even while another administrator remains', async () => {
    const first = await administrator()
    await administrator()
    const demote = await t.request('PUT', `/v1/users/${first.id}`, {
      token: first.token,
      body: { status: 'disabled' },
    })
    expect(demote.status).toBe(409)
    expect(demote.body.error.reason).toBe('self_lockout')
  })
})

describe('the last Platform Administrator', () => {
  it('is kept by the guard in the change’s transaction, whoever asks', async () => {
    const [only, ...others] = await administratorsWhoCanSignIn()
    for (const other of others) {
      await t.database.handle.db
        .updateTable('users')
        .set({ status: 'disabled' })
        .where('id', '=', other)
        .execute()
    }
    const row = await t.database.handle.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', only!)
      .executeTakeFirstOrThrow()
    for (const after of [
      { ...row, status: 'disabled' as const },
      { ...row, role_id: ROLE_IDS.platformUser },
      'erased' as const,
    ]) {
      const refusal = await checkAnAdministratorRemains(t.database.handle.db, row, after).catch((e) => e)
      expect(refusal).toBeInstanceOf(AppError)
      expect(refusal).toMatchObject({ reason: 'last_platform_administrator', statusCode: 409 })
    }
    // A second administrator, and the first may go.
    await administrator()
    await expect(
      checkAnAdministratorRemains(t.database.handle.db, row, { ...row, status: 'disabled' }),
    ).resolves.toBeUndefined()
  })

  it('survives two administrators disabling each other at once: exactly one is refused', async () => {
    // Exactly two administrators who can sign in.
    const a = await administrator()
    const b = await administrator()
    for (const id of await administratorsWhoCanSignIn()) {
      if (id === a.id || id === b.id) continue
      const off = await t.request('PUT', `/v1/users/${id}`, { token: a.token, body: { status: 'disabled' } })
      expect(off.status).toBe(200)
    }
    expect((await administratorsWhoCanSignIn()).sort()).toEqual([a.id, b.id].sort())
    // Both credentials warm, so that both requests pass authentication before either change is written.
    await t.request('POST', '/v1/login', { token: a.token })
    await t.request('POST', '/v1/login', { token: b.token })

    const [aDisablesB, bDemotesA] = await Promise.all([
      t.request('PUT', `/v1/users/${b.id}`, { token: a.token, body: { status: 'disabled' } }),
      t.request('PUT', `/v1/users/${a.id}`, { token: b.token, body: { roleId: ROLE_IDS.platformUser } }),
    ])
    const statuses = [aDisablesB.status, bDemotesA.status].sort()
    expect(statuses).toEqual([200, 409])
    const refused = aDisablesB.status === 409 ? aDisablesB : bDemotesA
    expect(refused.body.error.reason).toBe('last_platform_administrator')
    expect(await administratorsWhoCanSignIn()).toHaveLength(1)
  })
})
