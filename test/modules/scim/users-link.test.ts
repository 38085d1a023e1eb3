import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { eventIdsSoFar, eventsSince } from '../../helpers/audit-trail.js'
import { createTenantAsAdmin, uniqueEmail } from '../../helpers/fixtures.js'
import { createRole } from '../../helpers/roles.js'
import { createScimKey, type ScimTenant, scimTenant, userBody } from '../../helpers/scim.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'

/**
 * SCIM's create of a person who is a platform user already (docs/scim.md; issue 37 items 1 and 3): linking
 * and adopting need MANAGE_TENANT_ENROLLMENT alone — only creating a platform user needs MANAGE_ALL_USERS —
 * and a link writes its membership and its SCIM row together or not at all.
 */
const t = useTestApp({ clock: new FollowingClock() })
let admin: string
beforeAll(async () => {
  admin = await t.adminToken()
})

/** A tenant and a SCIM key whose role may read and enrol, but not create platform users. */
async function enrolmentOnlyTenant(): Promise<ScimTenant> {
  const tenant = await createTenantAsAdmin(t)
  const role = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS', 'MANAGE_TENANT_ENROLLMENT'] })
  const key = await createScimKey(t, tenant.id, { roleId: role.id })
  expect(key.status, JSON.stringify(key.body)).toBe(201)
  const base = `/scim/v2/tenants/${tenant.id}`
  const token = key.body.result.token as string
  return {
    tenantId: tenant.id,
    keyId: key.body.result.id,
    token,
    base,
    scim: (method, path, body) =>
      t.request(method, `${base}${path}`, {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { body, headers: { 'content-type': 'application/scim+json' } } : {}),
      }),
  }
}

/** A platform user made through /v1 by the administrator. */
async function platformUser(prefix: string): Promise<{ email: string; id: string }> {
  const email = uniqueEmail(prefix)
  const made = await t.request('POST', '/v1/users', {
    token: admin,
    body: { email, roleId: ROLE_IDS.platformUser },
  })
  expect(made.status).toBe(201)
  return { email, id: made.body.result.id }
}

async function membershipStatus(tenantId: string, userId: string): Promise<number> {
  return (await t.request('GET', `/v1/tenants/${tenantId}/users/${userId}`, { token: admin })).status
}

describe('a SCIM key with MANAGE_TENANT_ENROLLMENT but not MANAGE_ALL_USERS', () => {
  it('links an existing platform user and adopts an existing member', async () => {
    const s = await enrolmentOnlyTenant()
    const person = await platformUser('enrol-only-link')
    const linked = await s.scim('POST', '/Users', userBody(person.email))
    expect(linked.status, JSON.stringify(linked.body)).toBe(201)
    expect(linked.body).toMatchObject({ id: person.id, userName: person.email, active: true })
    const membership = await t.request('GET', `/v1/tenants/${s.tenantId}/users/${person.id}`, {
      token: admin,
    })
    expect(membership.body.result).toMatchObject({ status: 'accepted', roleId: ROLE_IDS.agent })
    expect((await s.scim('GET', `/Users/${person.id}`)).body.userName).toBe(person.email)

    const member = await platformUser('enrol-only-adopt')
    const invited = await t.request('POST', `/v1/tenants/${s.tenantId}/users`, {
      token: admin,
      body: { email: member.email, roleId: ROLE_IDS.agent },
    })
    expect(invited.status).toBe(201)
    const adopted = await s.scim('POST', '/Users', userBody(member.email))
    expect(adopted.status, JSON.stringify(adopted.body)).toBe(201)
    expect(adopted.body.id).toBe(member.id)
    expect(
      (await t.request('GET', `/v1/tenants/${s.tenantId}/users/${member.id}`, { token: admin })).body.result
        .status,
    ).toBe('accepted')
  })

  it('is refused a person who has no platform account (403), and nothing is created', async () => {
    const s = await enrolmentOnlyTenant()
    const email = uniqueEmail('enrol-only-new')
    const since = await eventIdsSoFar(t.ctx.db)
    const refused = await s.scim('POST', '/Users', userBody(email))
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '403',
      detail: 'MANAGE_ALL_USERS is required to create a platform user',
    })
    const found = await t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, { token: admin })
    expect(found.status).toBe(404)
    expect((await s.scim('GET', '/Users')).body.totalResults).toBe(0)
    const written = await t.ctx.db
      .selectFrom('audit_events')
      .select('id')
      .where('actor_id', '=', s.keyId)
      .execute()
    expect(written.filter((e) => !since.has(e.id))).toEqual([])
  })
})

describe('linking an existing platform user is one write', () => {
  it('whose SCIM row fails (a lost race) leaves no membership and no event behind, and can be sent again', async () => {
    const s = await scimTenant(t)
    const person = await platformUser('link-fault')
    // The SCIM row's insert fails as a lost race on the userName fails it; the membership's removal — the
    // old clean-up, whose error went unseen — fails too, so a membership written apart would stay.
    await sql
      .raw(
        `create or replace function test_lost_race() returns trigger language plpgsql as $$
         begin raise exception using errcode = 'unique_violation', constraint = 'scim_users_user_name_key',
           message = 'duplicate key value violates unique constraint "scim_users_user_name_key"'; end $$`,
      )
      .execute(t.ctx.db)
    await sql
      .raw(
        `create or replace function test_refuse_removal() returns trigger language plpgsql as $$
         begin raise exception 'removal refused by the test'; end $$`,
      )
      .execute(t.ctx.db)
    await sql
      .raw(
        `create trigger test_lost_race before insert on scim_users for each row
         when (new.user_id = '${person.id}') execute function test_lost_race()`,
      )
      .execute(t.ctx.db)
    await sql
      .raw(
        `create trigger test_refuse_removal before delete on tenant_users for each row
         when (old.user_id = '${person.id}') execute function test_refuse_removal()`,
      )
      .execute(t.ctx.db)
    const since = await eventIdsSoFar(t.ctx.db)
    try {
      const lost = await s.scim('POST', '/Users', userBody(person.email))
      expect(lost.status).toBe(409)
      expect(lost.body).toMatchObject({
        scimType: 'uniqueness',
        detail: expect.stringContaining('already exists'),
      })
    } finally {
      await sql.raw('drop trigger test_lost_race on scim_users').execute(t.ctx.db)
      await sql.raw('drop trigger test_refuse_removal on tenant_users').execute(t.ctx.db)
    }
    expect(await membershipStatus(s.tenantId, person.id)).toBe(404)
    expect(await eventsSince(t.ctx.db, since, 'membership', person.id)).toEqual([])
    expect((await s.scim('GET', `/Users/${person.id}`)).status).toBe(404)

    // The directory's retry links the person: one membership.created, the SCIM row with it.
    const again = await s.scim('POST', '/Users', userBody(person.email, { active: false }))
    expect(again.status, JSON.stringify(again.body)).toBe(201)
    expect(again.body).toMatchObject({ id: person.id, active: false })
    expect(await eventsSince(t.ctx.db, since, 'membership', person.id)).toEqual([
      {
        action: 'membership.created',
        changes: { roleId: [null, ROLE_IDS.agent], status: [null, 'disabled'] },
      },
    ])
  })
})
