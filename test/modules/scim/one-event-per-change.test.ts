import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { eventIdsSoFar, eventsSince } from '../../helpers/audit-trail.js'
import { uniqueEmail } from '../../helpers/fixtures.js'
import { PATCH_OP, type ScimTenant, scimTenant, userBody } from '../../helpers/scim.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'

/**
 * One SCIM write to one membership is one audit event, written in the transaction of the change
 * (docs/webhooks.md, docs/scim.md): `active` and the attributes the directory sent are one event, named
 * `membership.created` on a create, else `membership.status_changed` when the status moved, else
 * `scim_user.updated`. The platform user is another record: its `user.created` is its own event.
 */
const t = useTestApp({ clock: new FollowingClock() })
let admin: string
beforeAll(async () => {
  admin = await t.adminToken()
})

const patch = (...Operations: unknown[]) => ({ schemas: [PATCH_OP], Operations })

/** The membership as /v1 shows it. */
async function membership(s: ScimTenant, userId: string) {
  return (await t.request('GET', `/v1/tenants/${s.tenantId}/users/${userId}`, { token: admin })).body.result
}

/** A platform user made through /v1, and (with `status`) invited to the SCIM tenant through /v1. */
async function platformUser(s: ScimTenant, status?: 'pending' | 'invited') {
  const email = uniqueEmail('one-scim-event')
  const user = await t.request('POST', '/v1/users', {
    token: admin,
    body: { email, roleId: ROLE_IDS.platformUser },
  })
  expect(user.status).toBe(201)
  if (status) {
    const invited = await t.request('POST', `/v1/tenants/${s.tenantId}/users`, {
      token: admin,
      body: { email, roleId: ROLE_IDS.agent, status },
    })
    expect(invited.status).toBe(201)
  }
  return { email, id: user.body.result.id as string }
}

async function queuedInvitationMail(tenantId: string, userId: string): Promise<number> {
  const rows = await t.ctx.db
    .selectFrom('outbox')
    .select('id')
    .where('kind', '=', 'invitation_email')
    .where('tenant_id', '=', tenantId)
    .where(sql<boolean>`payload->>'userId' = ${userId}`)
    .execute()
  return rows.length
}

/** What SCIM and /v1 show of a user `active: false` left: inactive, and the membership disabled. */
async function expectInactive(s: ScimTenant, userId: string) {
  expect((await s.scim('GET', `/Users/${userId}`)).body.active).toBe(false)
  expect((await membership(s, userId)).status).toBe('disabled')
}

describe('PUT and PATCH /Users/{id}: one event for the membership', () => {
  it('active false on an invited member: one status move invited → disabled, its invitation mail gone', async () => {
    const s = await scimTenant(t)
    const { email, id } = await platformUser(s, 'invited')
    // /v1 keeps its state machine: an invited member is never disabled there.
    const v1 = await t.request('PUT', `/v1/tenants/${s.tenantId}/users/${id}`, {
      token: admin,
      body: { status: 'disabled' },
    })
    expect(v1.status).toBe(409)
    // Adopted without `active`: it stays invited, its SCIM row written.
    expect((await s.scim('POST', '/Users', userBody(email, { active: undefined }))).status).toBe(201)
    expect((await membership(s, id)).status).toBe('invited')
    expect(await queuedInvitationMail(s.tenantId, id)).toBe(1)
    const since = await eventIdsSoFar(t.ctx.db)
    const off = await s.scim('PATCH', `/Users/${id}`, patch({ op: 'replace', path: 'active', value: false }))
    expect(off.status).toBe(200)
    expect(off.body.active).toBe(false)
    const after = await membership(s, id)
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([
      {
        action: 'membership.status_changed',
        changes: { status: ['invited', 'disabled'], activeExtension: [null, after.activeExtension] },
      },
    ])
    expect(after.activeExtension).not.toBeNull()
    expect(await queuedInvitationMail(s.tenantId, id)).toBe(0)
    await expectInactive(s, id)
  })

  it('a name change with active false: one status_changed holding the status and the attribute', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('rename-off')
    const id = (await s.scim('POST', '/Users', userBody(email))).body.id as string
    const since = await eventIdsSoFar(t.ctx.db)
    const res = await s.scim(
      'PATCH',
      `/Users/${id}`,
      patch(
        { op: 'replace', path: 'displayName', value: 'Countess' },
        { op: 'replace', path: 'active', value: false },
      ),
    )
    expect(res.status).toBe(200)
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([
      {
        action: 'membership.status_changed',
        changes: { status: ['accepted', 'disabled'], displayName: [null, 'Countess'] },
      },
    ])
    expect(await eventsSince(t.ctx.db, since, 'user', id)).toEqual([])
    await expectInactive(s, id)
  })

  it('a PUT with a new name and active false: one status_changed, and the user its own user.updated', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('put-off')
    const id = (await s.scim('POST', '/Users', userBody(email))).body.id as string
    const since = await eventIdsSoFar(t.ctx.db)
    const name = { givenName: 'Ada', familyName: 'Byron' }
    const res = await s.scim('PUT', `/Users/${id}`, userBody(email, { name, active: false }))
    expect(res.status).toBe(200)
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([
      {
        action: 'membership.status_changed',
        changes: {
          status: ['accepted', 'disabled'],
          name: [{ givenName: 'Ada', familyName: 'Lovelace' }, name],
        },
      },
    ])
    // The platform user SCIM provisioned is another record: its names are its own event.
    expect((await eventsSince(t.ctx.db, since, 'user', id)).map((e) => e.action)).toEqual(['user.updated'])
    await expectInactive(s, id)
  })

  it('an attribute alone: one scim_user.updated', async () => {
    const s = await scimTenant(t)
    const id = (await s.scim('POST', '/Users', userBody(uniqueEmail('title')))).body.id as string
    const since = await eventIdsSoFar(t.ctx.db)
    const res = await s.scim('PATCH', `/Users/${id}`, patch({ op: 'add', path: 'title', value: 'Engineer' }))
    expect(res.status).toBe(200)
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([
      { action: 'scim_user.updated', changes: { title: [null, 'Engineer'] } },
    ])
    expect((await membership(s, id)).status).toBe('accepted')
  })

  it('a status move refused (the role ceiling) leaves the SCIM attributes unwritten too', async () => {
    const s = await scimTenant(t, ROLE_IDS.supervisor)
    const { email, id } = await platformUser(s)
    const added = await t.request('POST', `/v1/tenants/${s.tenantId}/users`, {
      token: admin,
      body: { email, roleId: ROLE_IDS.administrator, status: 'accepted' },
    })
    expect(added.status).toBe(201)
    const since = await eventIdsSoFar(t.ctx.db)
    const res = await s.scim(
      'PATCH',
      `/Users/${id}`,
      patch(
        { op: 'add', path: 'title', value: 'Escalated' },
        { op: 'replace', path: 'active', value: false },
      ),
    )
    expect(res.status).toBe(403)
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([])
    const read = await s.scim('GET', `/Users/${id}`)
    expect(read.body.title).toBeUndefined()
    expect(read.body.active).not.toBe(false)
    expect(
      await t.ctx.db.selectFrom('scim_users').select('user_id').where('user_id', '=', id).execute(),
    ).toEqual([])
    expect((await membership(s, id)).status).toBe('accepted')
  })

  it('a membership update that fails inside its transaction rolls the SCIM attributes and the names back with it', async () => {
    const s = await scimTenant(t)
    const id = (await s.scim('POST', '/Users', userBody(uniqueEmail('fault')))).body.id as string
    // A fault in the membership's UPDATE of this one user, as a concurrent move or a lost connection.
    await sql
      .raw(
        `create or replace function test_refuse_membership() returns trigger language plpgsql as $$
         begin raise exception 'refused by the test on %', tg_table_name; end $$`,
      )
      .execute(t.ctx.db)
    await sql
      .raw(
        `create trigger test_refuse_membership before update on tenant_users for each row
         when (new.user_id = '${id}') execute function test_refuse_membership()`,
      )
      .execute(t.ctx.db)
    const since = await eventIdsSoFar(t.ctx.db)
    try {
      const res = await s.scim(
        'PATCH',
        `/Users/${id}`,
        patch(
          { op: 'add', path: 'title', value: 'Lost' },
          { op: 'replace', path: 'name.givenName', value: 'Lost' },
          { op: 'replace', path: 'active', value: false },
        ),
      )
      expect(res.status).toBeGreaterThanOrEqual(500)
    } finally {
      await sql.raw('drop trigger test_refuse_membership on tenant_users').execute(t.ctx.db)
    }
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([])
    // The platform user SCIM provisioned keeps its names: they were in the same transaction.
    expect(await eventsSince(t.ctx.db, since, 'user', id)).toEqual([])
    const read = await s.scim('GET', `/Users/${id}`)
    expect(read.body).toMatchObject({ active: true, name: { givenName: 'Ada' } })
    expect(read.body.title).toBeUndefined()
    const user = await t.request('GET', `/v1/users/${id}`, { token: admin })
    expect(user.body.result.firstName).toBe('Ada')
  })
})

describe('POST /Users with active false: created disabled, one event for the membership', () => {
  it('a new person: one user.created and one membership.created with status disabled', async () => {
    const s = await scimTenant(t)
    const since = await eventIdsSoFar(t.ctx.db)
    const created = await s.scim('POST', '/Users', userBody(uniqueEmail('new-off'), { active: false }))
    expect(created.status).toBe(201)
    expect(created.body.active).toBe(false)
    const id = created.body.id as string
    expect((await eventsSince(t.ctx.db, since, 'user', id)).map((e) => e.action)).toEqual(['user.created'])
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([
      {
        action: 'membership.created',
        changes: { roleId: [null, ROLE_IDS.agent], status: [null, 'disabled'] },
      },
    ])
    await expectInactive(s, id)
    // As an acceptance would have left it: the default extension is the active one.
    expect((await membership(s, id)).activeExtension).not.toBeNull()
  })

  it('a platform user not yet a member: one membership.created with status disabled', async () => {
    const s = await scimTenant(t)
    const { email, id } = await platformUser(s)
    const since = await eventIdsSoFar(t.ctx.db)
    const created = await s.scim('POST', '/Users', userBody(email, { active: false }))
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ id, active: false })
    expect(await eventsSince(t.ctx.db, since, 'user', id)).toEqual([])
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([
      {
        action: 'membership.created',
        changes: { roleId: [null, ROLE_IDS.agent], status: [null, 'disabled'] },
      },
    ])
    await expectInactive(s, id)
  })

  it('an invited member adopted: one status_changed holding the status and the attributes sent', async () => {
    const s = await scimTenant(t)
    const { email, id } = await platformUser(s, 'invited')
    const since = await eventIdsSoFar(t.ctx.db)
    const body = userBody(email, { active: false })
    const adopted = await s.scim('POST', '/Users', body)
    expect(adopted.status).toBe(201)
    expect(adopted.body).toMatchObject({ id, active: false })
    const after = await membership(s, id)
    expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([
      {
        action: 'membership.status_changed',
        changes: {
          status: ['invited', 'disabled'],
          activeExtension: [null, after.activeExtension],
          userName: [null, email],
          name: [null, body.name],
          emails: [null, body.emails],
        },
      },
    ])
    expect(await eventsSince(t.ctx.db, since, 'user', id)).toEqual([])
    expect(await queuedInvitationMail(s.tenantId, id)).toBe(0)
    await expectInactive(s, id)
  })
})
