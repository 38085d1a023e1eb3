import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { uniqueEmail } from '../../helpers/fixtures.js'
import { PATCH_OP, type ScimTenant, scimTenant } from '../../helpers/scim.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'
import { createTestDatabase, type TestDatabase } from '../../helpers/test-database.js'

/**
 * A directory's large group (docs/scim.md): 2,000 members are written and read back whole, and checking
 * that each is a user of the tenant reads them a thousand at a time — a read per member made a group of
 * 10,000 ten thousand round trips. Nothing is timed: the app's database counts the statements each
 * request runs, and a group a hundred times larger may run only the one extra read of its second thousand.
 */
let database: TestDatabase
let t: TestApp
let admin: string
let statements = 0
beforeAll(async () => {
  database = await createTestDatabase()
  const counted = database.handle.db.withPlugin({
    transformQuery: ({ node }) => node,
    transformResult: async ({ result }) => {
      statements += 1
      return result
    },
  })
  t = await createTestApp({ database: { ...database, handle: { ...database.handle, db: counted } } })
  admin = await t.adminToken()
}, 60_000)
afterAll(async () => {
  await t.close()
  await database.drop()
})

const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group'
const MEMBERS = 2_000

/** The statements `request` ran, and its answer. */
async function counting<T>(request: () => Promise<T>): Promise<{ answer: T; statements: number }> {
  const before = statements
  const answer = await request()
  return { answer, statements: statements - before }
}

/** `n` accepted members of the SCIM tenant, loaded through the bulk load (a thousand a request). */
async function members(s: ScimTenant, n: number): Promise<string[]> {
  const ids: string[] = []
  for (let loaded = 0; loaded < n; loaded += 1_000) {
    const rows = Array.from({ length: Math.min(1_000, n - loaded) }, (_, i) => ({
      email: uniqueEmail(`member${loaded + i}`),
      roleId: ROLE_IDS.platformUser,
      tenantId: s.tenantId,
      tenantRoleId: ROLE_IDS.agent,
      tenantStatus: 'accepted',
    }))
    const response = await t.request('POST', '/v1/users', { token: admin, body: rows })
    expect(response.body.summary, JSON.stringify(response.body.result?.[0])).toMatchObject({ failed: 0 })
    ids.push(...response.body.result.map((row: { result: { id: string } }) => row.result.id))
  }
  return ids
}

const sorted = (ids: readonly string[]) => [...ids].sort()

/** A PATCH of `op` members `ids`, a hundred values an operation (a multi-valued attribute's most). */
function membersPatch(op: 'add' | 'remove', ids: readonly string[]) {
  const Operations = []
  for (let i = 0; i < ids.length; i += 100) {
    Operations.push({ op, path: 'members', value: ids.slice(i, i + 100).map((value) => ({ value })) })
  }
  return { schemas: [PATCH_OP], Operations }
}

/** A new group of the SCIM tenant holding `ids` (added by PATCH, as Entra ID adds them). */
async function groupOf(s: ScimTenant, displayName: string, ids: readonly string[]): Promise<string> {
  const created = await s.scim('POST', '/Groups', { schemas: [GROUP], displayName })
  expect(created.status).toBe(201)
  if (ids.length > 0) {
    const added = await s.scim('PATCH', `/Groups/${created.body.id}`, membersPatch('add', ids))
    expect(added.status, JSON.stringify(added.body)).toBe(204)
  }
  return created.body.id
}

const memberIdsOf = async (s: ScimTenant, id: string): Promise<string[]> =>
  sorted((await s.scim('GET', `/Groups/${id}`)).body.members?.map((m: { value: string }) => m.value) ?? [])

describe('a group of 2,000 members', () => {
  it('is written whole, with the statements of a group of 20 and one more read', async () => {
    const s = await scimTenant(t)
    const ids = await members(s, MEMBERS)
    const twenty = await groupOf(s, 'Twenty', [])
    const everyone = await groupOf(s, 'Everyone', [])

    const small = await counting(() =>
      s.scim('PATCH', `/Groups/${twenty}`, membersPatch('add', ids.slice(0, 20))),
    )
    expect(small.answer.status, JSON.stringify(small.answer.body)).toBe(204)
    const large = await counting(() => s.scim('PATCH', `/Groups/${everyone}`, membersPatch('add', ids)))
    expect(large.answer.status, JSON.stringify(large.answer.body)).toBe(204)
    // The second thousand members is one read more; anything per member would be ~2,000 more.
    expect(large.statements).toBeLessThanOrEqual(small.statements + 2)

    expect(await memberIdsOf(s, everyone)).toEqual(sorted(ids))
    expect(await memberIdsOf(s, twenty)).toEqual(sorted(ids.slice(0, 20)))
    const last = await s.scim('GET', `/Users/${ids[MEMBERS - 1]}`)
    expect(last.body.groups.map((g: { display: string }) => g.display)).toEqual(['Everyone'])
    expect((await s.scim('GET', `/Users/${ids[0]}`)).body.groups).toHaveLength(2)
  })

  it('mapped to a role, drops half its members with their roles read at once; a stranger among them is refused', async () => {
    const s = await scimTenant(t)
    const ids = await members(s, MEMBERS)
    const id = await groupOf(s, 'Agents', ids)
    // Mapped to the role its members hold: the mapping plans 2,000 members' roles and changes none.
    const mapped = await t.request('PUT', `/v1/tenants/${s.tenantId}/scim/groups/${id}`, {
      token: admin,
      body: { roleId: ROLE_IDS.agent, priority: 10 },
    })
    expect(mapped.body.result).toMatchObject({ roleId: ROLE_IDS.agent, members: MEMBERS })

    const small = await counting(() =>
      s.scim('PATCH', `/Groups/${id}`, membersPatch('remove', ids.slice(0, 1))),
    )
    expect(small.answer.status, JSON.stringify(small.answer.body)).toBe(204)
    const half = ids.slice(1, MEMBERS / 2)
    const large = await counting(() => s.scim('PATCH', `/Groups/${id}`, membersPatch('remove', half)))
    expect(large.answer.status, JSON.stringify(large.answer.body)).toBe(204)
    expect(large.statements).toBeLessThanOrEqual(small.statements + 2)
    expect(await memberIdsOf(s, id)).toEqual(sorted(ids.slice(MEMBERS / 2)))
    // Out of the group, the tenant's default role: the one they held.
    const role = await t.request('GET', `/v1/tenants/${s.tenantId}/users/${ids[1]}`, { token: admin })
    expect(role.body.result.roleId).toBe(ROLE_IDS.agent)

    const other = await scimTenant(t)
    const [stranger] = await members(other, 1)
    const refused = await s.scim('PATCH', `/Groups/${id}`, membersPatch('add', [...half, stranger as string]))
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({
      scimType: 'invalidValue',
      detail: `members: "${stranger}" is not a user of this tenant`,
    })
    expect(await memberIdsOf(s, id)).toEqual(sorted(ids.slice(MEMBERS / 2)))
  })
})
