import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { freshTenant, insertMembership, uniqueEmail } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/** `GET /v1/users?q=` (API.md §17): a search by e-mail or name, within what the caller may read, paged. */
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

  it('takes % and _ literally', async () => {
    await create({ email: uniqueEmail(`${marker}pct`), firstName: 'Per', lastName: 'Cent' })
    expect((await search('%')).body.result).toEqual([])
    expect((await search(`${marker}_ct`)).body.result).toEqual([])
  })

  it('pages like every list', async () => {
    const prefix = `${marker}page`
    for (let i = 0; i < 3; i++) await create({ email: uniqueEmail(`${prefix}${i}`) })
    const first = await search(prefix, '&limit=2')
    expect(first.status).toBe(200)
    expect(first.body.result).toHaveLength(2)
    expect(first.body.nextCursor).toBeTypeOf('string')
    const second = await search(prefix, `&limit=2&cursor=${first.body.nextCursor}`)
    expect(second.body.result).toHaveLength(1)
    expect(second.body.nextCursor).toBeUndefined()
  })

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

  it('refuses an empty search with a 400 naming q', async () => {
    const response = await search('')
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('q')
  })
})
