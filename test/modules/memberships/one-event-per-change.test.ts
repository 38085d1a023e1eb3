import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { openInvitationMail } from '../../../src/outbox/mail/invitation-mail.js'
import { eventIdsSoFar, eventsSince } from '../../helpers/audit-trail.js'
import { createTenantAsAdmin, insertUser, uniqueEmail } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * One change to one record is one audit event, whose `changes` hold every field it changed (docs/webhooks.md):
 * an acceptance that also sets the active extension, a resent invitation, a role change together with a
 * profile edit, and a user update that touches names, status, role and password each write exactly one
 * event for the record they change.
 */
let t: TestApp
let admin: string

beforeAll(async () => {
  t = await createTestApp()
  admin = await t.adminToken()
})
afterAll(async () => t.close())

/** A fresh tenant and a platform user invited to it with mail; the invitation token. */
async function invited() {
  const tenant = await createTenantAsAdmin(t)
  const user = await insertUser(t.ctx.db, { email: uniqueEmail('one-event') })
  const response = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
    token: admin,
    body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
  })
  expect(response.status).toBe(201)
  const [mail] = await t.ctx.db
    .selectFrom('outbox')
    .select(['id', 'payload'])
    .where('kind', '=', 'invitation_email')
    .where(sql<boolean>`payload->>'to' = ${user.email}`)
    .execute()
  const token = openInvitationMail(t.ctx.keys, mail!.id, mail!.payload as Record<string, unknown>).token
  return { tenantId: tenant.id, userId: user.id, token, path: `/v1/tenants/${tenant.id}/users/${user.id}` }
}

describe('one audit event per changed record', () => {
  it('an acceptance by an administrator: one event with the status and the active extension it set', async () => {
    const { userId, path } = await invited()
    const since = await eventIdsSoFar(t.ctx.db)
    const accepted = await t.request('PUT', path, { token: admin, body: { status: 'accepted' } })
    expect(accepted.status).toBe(200)
    const events = await eventsSince(t.ctx.db, since, 'membership', userId)
    expect(events).toHaveLength(1)
    expect(events[0]!.action).toBe('membership.status_changed')
    expect(events[0]!.changes).toMatchObject({
      status: ['invited', 'accepted'],
      activeExtension: [null, accepted.body.result.activeExtension],
    })
  })

  it('an acceptance with the invitation token: one event for the membership, one for the user', async () => {
    const { userId, token, tenantId } = await invited()
    const since = await eventIdsSoFar(t.ctx.db)
    const accepted = await t.request('POST', `/v1/invitations/${token}/accept`, { body: {} })
    expect(accepted.status).toBe(200)
    const events = await eventsSince(t.ctx.db, since, 'membership', userId)
    expect(events).toHaveLength(1)
    const membership = await t.request('GET', `/v1/tenants/${tenantId}/users/${userId}`, { token: admin })
    expect(events[0]!.changes).toEqual({
      status: ['invited', 'accepted'],
      activeExtension: [null, membership.body.result.activeExtension],
    })
  })

  it('a resent invitation: one event with the new window', async () => {
    const { userId, path } = await invited()
    t.clock.advance(60_000)
    const since = await eventIdsSoFar(t.ctx.db)
    const resent = await t.request('PUT', path, { token: admin, body: { status: 'invited' } })
    expect(resent.status).toBe(200)
    const events = await eventsSince(t.ctx.db, since, 'membership', userId)
    expect(events).toHaveLength(1)
    expect(events[0]!.action).toBe('membership.invited')
    const [before, after] = (events[0]!.changes as { invitationExpiryDate: [string, string] })
      .invitationExpiryDate
    expect(new Date(after).getTime()).toBeGreaterThan(new Date(before).getTime())
    expect(after).toBe(resent.body.result.invitationExpiryDate)
  })

  it('a role change with a profile edit: one event holding both', async () => {
    const { userId, path } = await invited()
    const since = await eventIdsSoFar(t.ctx.db)
    const changed = await t.request('PUT', path, {
      token: admin,
      body: { roleId: ROLE_IDS.supervisor, workStationId: 'desk-7' },
    })
    expect(changed.status).toBe(200)
    const events = await eventsSince(t.ctx.db, since, 'membership', userId)
    expect(events).toEqual([
      {
        action: 'membership.role_changed',
        changes: { roleId: [ROLE_IDS.agent, ROLE_IDS.supervisor], workStationId: ['', 'desk-7'] },
      },
    ])
  })

  it('a user update of names, status, role and password: one event holding every field', async () => {
    const user = await insertUser(t.ctx.db, { email: uniqueEmail('one-user-event') })
    const since = await eventIdsSoFar(t.ctx.db)
    const put = await t.request('PUT', `/v1/users/${user.id}`, {
      token: admin,
      body: {
        lastName: 'Lovelace',
        status: 'disabled',
        roleId: ROLE_IDS.platformAdministrator,
        password: 'a long enough password',
      },
    })
    expect(put.status).toBe(200)
    const events = await eventsSince(t.ctx.db, since, 'user', user.id)
    expect(events).toHaveLength(1)
    expect(events[0]!.action).toBe('user.status_changed')
    expect(events[0]!.changes).toMatchObject({
      lastName: [expect.anything(), 'Lovelace'],
      status: ['enabled', 'disabled'],
      roleId: [expect.any(String), ROLE_IDS.platformAdministrator],
      password: [expect.anything(), '********'],
    })
  })
})
