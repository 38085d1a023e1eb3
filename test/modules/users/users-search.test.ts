import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { freshTenant, insertMembership, uniqueEmail } from '../../helpers/fixtures.js'
import { searchContract } from '../../helpers/search-contract.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/** `GET /v1/users?q=` (docs/api.md#platform-users): a search by e-mail or name, within what the caller may read, paged. */
let t: TestApp
let token: string
const marker = `zq${Date.now().toString(36)}`

async function create(body: Record<string, unknown>) {
  const response = await t.request('POST', '/v1/users', {
    token,
    body: { roleId: ROLE_IDS.platformUser, ...body },
  })
  expect(response.status).toBe(201)
  return response.body.result as { id: string; email: string }
}

async function search(q: string, extra = '', as = token) {
  return t.request('GET', `/v1/users?q=${encodeURIComponent(q)}${extra}`, { token: as })
}

beforeAll(async () => {
  t = await createTestApp()
  token = await t.adminToken()
})
afterAll(() => t.close())

describe('GET /v1/users?q=', () => {
  it('finds by part of the e-mail, the first name, the last name or the full name, ignoring case', async () => {
    const ada = await create({ email: uniqueEmail(`${marker}ada`), firstName: 'Ada', lastName: 'Lovelace' })
    const alan = await create({
      email: uniqueEmail('turing'),
      firstName: `Alan${marker}`,
      lastName: 'Turing',
    })
    const ids = async (q: string) => (await search(q)).body.result.map((u: { id: string }) => u.id).sort()
    expect(await ids(`${marker}ADA`)).toEqual([ada.id])
    expect(await ids(`alan${marker}`)).toEqual([alan.id])
    expect(await ids(`${marker} turing`)).toEqual([alan.id])
    expect(await ids(marker)).toEqual([ada.id, alan.id].sort())
    expect(await ids(`${marker}nobody`)).toEqual([])
  })

  searchContract({ marker, add: create, search: (q, extra) => search(q, extra) })

  it('finds only users the caller may read', async () => {
    const { tenant, admin } = await freshTenant(t)
    const member = await create({ email: uniqueEmail(`${marker}member`) })
    const stranger = await create({ email: uniqueEmail(`${marker}stranger`) })
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: member.id,
      roleId: ROLE_IDS.agent,
    })
    const found = (await search(marker, '', admin.token)).body.result.map((u: { id: string }) => u.id)
    expect(found).toContain(member.id)
    expect(found).not.toContain(stranger.id)
  })
})
