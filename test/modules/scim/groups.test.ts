import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { memberWithToken, uniqueEmail } from '../../helpers/fixtures.js'
import { PATCH_OP, type ScimTenant, scimTenant, userBody } from '../../helpers/scim.js'
import { createTestApp, FollowingClock, type TestApp } from '../../helpers/test-app.js'

/** SCIM Groups, the group → role mapping and the /v1 settings routes (docs/scim.md), over HTTP. */
let t: TestApp
let admin: string
beforeAll(async () => {
  t = await createTestApp({ clock: new FollowingClock() })
  admin = await t.adminToken()
})
afterAll(() => t.close())

const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group'
const patch = (...Operations: unknown[]) => ({ schemas: [PATCH_OP], Operations })

async function users(s: ScimTenant, n: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < n; i++)
    ids.push((await s.scim('POST', '/Users', userBody(uniqueEmail(`g${i}`)))).body.id)
  return ids
}

const roleOf = async (s: ScimTenant, userId: string) =>
  (await t.request('GET', `/v1/tenants/${s.tenantId}/users/${userId}`, { token: admin })).body.result.roleId

describe('Groups', () => {
  it('takes Entra ID’s extra schema URI, Okta’s member adds and removes by filter, Entra’s remove with a value list', async () => {
    const s = await scimTenant(t)
    const [a, b, c] = await users(s, 3)
    const created = await s.scim('POST', '/Groups', {
      schemas: [GROUP, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'],
      externalId: 'e-1',
      displayName: 'Sales',
      meta: { resourceType: 'Group' },
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ schemas: [GROUP], displayName: 'Sales', externalId: 'e-1' })
    const id = created.body.id
    // Okta: add members, a path-less replace carrying the group's id, a remove by filter.
    const added = await s.scim(
      'PATCH',
      `/Groups/${id}`,
      patch({ op: 'add', path: 'members', value: [{ value: a, display: 'a' }, { value: b }, { value: c }] }),
    )
    expect(added.status).toBe(204)
    expect(
      (
        await s.scim(
          'PATCH',
          `/Groups/${id}`,
          patch({ op: 'replace', value: { id, displayName: 'Sales EMEA' } }),
        )
      ).status,
    ).toBe(204)
    expect(
      (await s.scim('PATCH', `/Groups/${id}`, patch({ op: 'remove', path: `members[value eq "${a}"]` })))
        .status,
    ).toBe(204)
    // Entra ID: capitalised op, a value list with $ref null.
    expect(
      (
        await s.scim(
          'PATCH',
          `/Groups/${id}`,
          patch({ op: 'Remove', path: 'members', value: [{ $ref: null, value: b }] }),
        )
      ).status,
    ).toBe(204)
    const read = await s.scim('GET', `/Groups/${id}`)
    expect(read.body.displayName).toBe('Sales EMEA')
    expect(read.body.members).toEqual([
      { value: c, $ref: `http://tenantry.test${s.base}/Users/${c}`, type: 'User' },
    ])
    expect((await s.scim('GET', `/Users/${c}`)).body.groups).toEqual([
      { value: id, $ref: `http://tenantry.test${s.base}/Groups/${id}`, display: 'Sales EMEA' },
    ])
    // Entra ID's queries.
    const byName = await s.scim(
      'GET',
      `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "sales emea"')}`,
    )
    expect(byName.body.Resources).toHaveLength(1)
    expect(byName.body.Resources[0].members).toBeUndefined()
    const member = await s.scim(
      'GET',
      `/Groups?filter=${encodeURIComponent(`id eq "${id}" and members[value eq "${c}"]`)}&excludedAttributes=members`,
    )
    expect(member.body.totalResults).toBe(1)
    const notMember = await s.scim(
      'GET',
      `/Groups?filter=${encodeURIComponent(`id eq "${id}" and members[value eq "${a}"]`)}`,
    )
    expect(notMember.body.totalResults).toBe(0)
    const events = await t.request(
      'GET',
      `/v1/tenants/${s.tenantId}/audit-events?actorId=${s.keyId}&action=scim_group.updated`,
      { token: admin },
    )
    expect(events.body.result.length).toBeGreaterThanOrEqual(3)
  })

  it('refuses a member that is not a user of this tenant, a duplicate displayName, and DELETE removes the group, never users', async () => {
    const s = await scimTenant(t)
    const other = await scimTenant(t)
    const [outsider] = await users(other, 1)
    const [mine] = await users(s, 1)
    const bad = await s.scim('POST', '/Groups', { displayName: 'X', members: [{ value: outsider }] })
    expect(bad.status).toBe(400)
    expect(bad.body.scimType).toBe('invalidValue')
    const group = await s.scim('POST', '/Groups', { displayName: 'X', members: [{ value: mine }] })
    expect(group.status).toBe(201)
    const dup = await s.scim('POST', '/Groups', { displayName: 'x' })
    expect(dup.status).toBe(409)
    expect(dup.body.scimType).toBe('uniqueness')
    expect((await s.scim('DELETE', `/Groups/${group.body.id}`)).status).toBe(204)
    expect((await s.scim('GET', `/Groups/${group.body.id}`)).status).toBe(404)
    expect((await s.scim('GET', `/Users/${mine}`)).status).toBe(200)
  })

  it('answers a displayName taken meanwhile (a lost race, met by the unique key) with 409 uniqueness', async () => {
    const s = await scimTenant(t)
    // The insert fails as the loser of a race fails it, after the name's check passed.
    await sql
      .raw(
        `create or replace function test_lost_group_race() returns trigger language plpgsql as $$
         begin raise exception using errcode = 'unique_violation', constraint = 'scim_groups_display_name_key',
           message = 'duplicate key value violates unique constraint "scim_groups_display_name_key"'; end $$`,
      )
      .execute(t.ctx.db)
    await sql
      .raw(
        `create trigger test_lost_group_race before insert on scim_groups for each row
         when (new.tenant_id = '${s.tenantId}') execute function test_lost_group_race()`,
      )
      .execute(t.ctx.db)
    try {
      const lost = await s.scim('POST', '/Groups', { displayName: 'Night shift' })
      expect(lost.body).toEqual({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '409',
        scimType: 'uniqueness',
        detail: 'A group named "Night shift" already exists',
      })
    } finally {
      await sql.raw('drop trigger test_lost_group_race on scim_groups').execute(t.ctx.db)
    }
    expect((await s.scim('GET', '/Groups')).body.totalResults).toBe(0)
    expect((await s.scim('POST', '/Groups', { displayName: 'Night shift' })).status).toBe(201)
  })
})

describe('the group → role mapping and settings', () => {
  it('gives a member the role of its mapped group with the lowest priority, else defaultRoleId; never changes roles while nothing is mapped', async () => {
    const s = await scimTenant(t)
    const u = (await users(s, 1))[0] as string
    const leads = (await s.scim('POST', '/Groups', { displayName: 'Leads', members: [{ value: u }] })).body.id
    const admins = (await s.scim('POST', '/Groups', { displayName: 'Admins', members: [{ value: u }] })).body
      .id
    // Nothing mapped: SCIM leaves the role alone, even one set through /v1.
    await t.request('PUT', `/v1/tenants/${s.tenantId}/users/${u}`, {
      token: admin,
      body: { roleId: ROLE_IDS.supervisor },
    })
    await s.scim(
      'PATCH',
      `/Groups/${leads}`,
      patch({ op: 'replace', path: 'displayName', value: 'Team leads' }),
    )
    expect(await roleOf(s, u)).toBe(ROLE_IDS.supervisor)

    const settings = await t.request('GET', `/v1/tenants/${s.tenantId}/scim`, { token: admin })
    expect(settings.body.result).toEqual({
      tenantId: s.tenantId,
      defaultRoleId: ROLE_IDS.agent,
      baseUrl: `http://tenantry.test${s.base}`,
    })
    const mapLeads = await t.request('PUT', `/v1/tenants/${s.tenantId}/scim/groups/${leads}`, {
      token: admin,
      body: { roleId: ROLE_IDS.supervisor, priority: 20 },
    })
    expect(mapLeads.body.result).toMatchObject({ roleId: ROLE_IDS.supervisor, priority: 20, members: 1 })
    await t.request('PUT', `/v1/tenants/${s.tenantId}/scim/groups/${admins}`, {
      token: admin,
      body: { roleId: ROLE_IDS.administrator, priority: 10 },
    })
    expect(await roleOf(s, u)).toBe(ROLE_IDS.administrator)
    await s.scim(
      'PATCH',
      `/Groups/${admins}`,
      patch({ op: 'remove', path: 'members', value: [{ value: u }] }),
    )
    expect(await roleOf(s, u)).toBe(ROLE_IDS.supervisor)
    await s.scim('DELETE', `/Groups/${leads}`)
    expect(await roleOf(s, u)).toBe(ROLE_IDS.agent)

    const list = await t.request('GET', `/v1/tenants/${s.tenantId}/scim/groups`, { token: admin })
    expect(list.body.result.map((g: { displayName: string }) => g.displayName)).toEqual(['Admins'])
    const put = await t.request('PUT', `/v1/tenants/${s.tenantId}/scim`, {
      token: admin,
      body: { defaultRoleId: ROLE_IDS.supervisor, baseUrl: 'ignored' },
    })
    expect(put.body.result.defaultRoleId).toBe(ROLE_IDS.supervisor)
    const next = (await s.scim('POST', '/Users', userBody(uniqueEmail('next')))).body.id
    expect(await roleOf(s, next)).toBe(ROLE_IDS.supervisor)
  })

  it('the settings routes need MANAGE_TENANT_ENROLLMENT and obey the ceiling', async () => {
    const s = await scimTenant(t)
    const group = (await s.scim('POST', '/Groups', { displayName: 'G' })).body.id
    const sup = await memberWithToken(t, s.tenantId, ROLE_IDS.supervisor)
    const agent = await memberWithToken(t, s.tenantId, ROLE_IDS.agent)
    expect((await t.request('GET', `/v1/tenants/${s.tenantId}/scim`, { token: agent.token })).status).toBe(
      403,
    )
    const above = await t.request('PUT', `/v1/tenants/${s.tenantId}/scim/groups/${group}`, {
      token: sup.token,
      body: { roleId: ROLE_IDS.administrator, priority: 1 },
    })
    expect(above.status).toBe(403)
    expect(above.body.error.reason).toBe('role_exceeds_caller')
    const defaultAbove = await t.request('PUT', `/v1/tenants/${s.tenantId}/scim`, {
      token: sup.token,
      body: { defaultRoleId: ROLE_IDS.administrator },
    })
    expect(defaultAbove.status).toBe(403)
    const ok = await t.request('PUT', `/v1/tenants/${s.tenantId}/scim/groups/${group}`, {
      token: sup.token,
      body: { roleId: null, priority: 5 },
    })
    expect(ok.status).toBe(200)
  })
})
