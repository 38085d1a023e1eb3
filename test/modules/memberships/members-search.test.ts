import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, uniqueEmail } from '../../helpers/fixtures.js'
import { searchContract } from '../../helpers/search-contract.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * `GET /v1/tenants/{t}/users?q=`: a search of one tenant's members by e-mail or name, with the status
 * filter and paged like every list — what the console's member search runs (docs/console.md "Members").
 */
let t: TestApp
let token: string
let tenantId: string
const marker = `mq${Date.now().toString(36)}`

/** A platform user made a member of the tenant with `status`. */
async function member(body: Record<string, unknown>, status: 'accepted' | 'pending' = 'accepted') {
  const response = await t.request('POST', '/v1/users', {
    token,
    body: { roleId: ROLE_IDS.platformUser, ...body },
  })
  expect(response.status).toBe(201)
  const user = response.body.result as { id: string }
  await insertMembership(t.database.handle.db, { tenantId, userId: user.id, roleId: ROLE_IDS.agent, status })
  return user
}

async function search(q: string, extra = '', tenant = tenantId) {
  return t.request('GET', `/v1/tenants/${tenant}/users?q=${encodeURIComponent(q)}${extra}`, { token })
}

const ids = async (q: string, extra = '') =>
  (await search(q, extra)).body.result.map((m: { userId: string }) => m.userId).sort()

beforeAll(async () => {
  t = await createTestApp()
  token = await t.adminToken()
  tenantId = (await createTenantAsAdmin(t)).id
})
afterAll(() => t.close())

describe('GET /v1/tenants/{t}/users?q=', () => {
  it('finds members by part of the e-mail, a name or the full name, ignoring case, and only members', async () => {
    const ada = await member({ email: uniqueEmail(`${marker}ada`), firstName: 'Ada', lastName: 'Lovelace' })
    const alan = await member(
      { email: uniqueEmail('turing'), firstName: `Alan${marker}`, lastName: 'Turing' },
      'pending',
    )
    // A platform user with the marker who is not a member here is not found.
    const outsider = await t.request('POST', '/v1/users', {
      token,
      body: { email: uniqueEmail(`${marker}outsider`), roleId: ROLE_IDS.platformUser },
    })
    expect(outsider.status).toBe(201)

    expect(await ids(`${marker}ADA`)).toEqual([ada.id])
    expect(await ids(`alan${marker}`)).toEqual([alan.id])
    expect(await ids(`${marker} turing`)).toEqual([alan.id])
    expect(await ids(marker)).toEqual([ada.id, alan.id].sort())
    expect(await ids(marker, '&status=pending')).toEqual([alan.id])
    expect(await ids(`${marker}nobody`)).toEqual([])
    // Another tenant's members are not searched.
    const other = await createTenantAsAdmin(t)
    expect((await search(marker, '', other.id)).body.result).toEqual([])
  })

  searchContract({ marker, add: (body) => member(body), search: (q, extra) => search(q, extra) })
})
