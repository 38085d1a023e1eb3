import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { invitationTokenHash } from '../../../src/modules/memberships/invitation-token.js'
import { openInvitationMail } from '../../../src/outbox/mail/invitation-mail.js'
import { closeAfterBulk } from '../../helpers/bulk.js'
import { createTenantAsAdmin, insertUser, memberWithToken, uniqueEmail } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Bulk load of platform users, the JSON-array form (docs/api.md#bulk-load-of-platform-users). The NDJSON form: bulk-ndjson.test.ts. */

const t = useTestApp()
let adminToken: string
let supervisor: { token: string; id: string }
let tenantId: string

beforeAll(async () => {
  adminToken = await t.adminToken()
  tenantId = (await createTenantAsAdmin(t)).id
  // A tenant Supervisor holds MANAGE_ALL_USERS in its tenant but no platform permission: it may create
  // users only with a platform role that carries no permission.
  supervisor = await asMember(ROLE_IDS.supervisor)
})
afterAll(() => closeAfterBulk(t))

/** A member of the tenant with a token. The fixture stamps the password change with the wall clock, so
 * the app's clock is brought up to it first, or the token would predate the password and be refused. */
async function asMember(roleId: string) {
  t.clock.set(new Date(Date.now() + 2000))
  return memberWithToken(t, tenantId, roleId)
}

async function userCount(): Promise<number> {
  const row = await t.database.handle.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function findByEmail(email: string) {
  return t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, { token: adminToken })
}

function mixedBatch(existingEmail: string) {
  const valid = [uniqueEmail('bulk-a'), uniqueEmail('bulk-b'), uniqueEmail('bulk-c')]
  const items = [
    { email: valid[0], roleId: ROLE_IDS.platformUser, firstName: 'Ada', personalTelephone: '+14155550100' },
    { email: 'not-an-email', roleId: ROLE_IDS.platformUser },
    { email: valid[1], roleId: ROLE_IDS.platformUser, lastName: 'Lovelace' },
    { email: valid[0]!.toUpperCase(), roleId: ROLE_IDS.platformUser },
    { email: existingEmail, roleId: ROLE_IDS.platformUser },
    { email: uniqueEmail('too-high'), roleId: ROLE_IDS.platformAdministrator },
    { email: uniqueEmail('bad-phone'), roleId: ROLE_IDS.platformUser, personalTelephone: '555-0100' },
    { email: valid[2], roleId: ROLE_IDS.platformUser, status: 'pending', externalId: 'crm-42' },
  ]
  return { valid, items }
}

describe('POST /v1/users with a JSON array', () => {
  it('answers every row on its own, in input order, and creates only the valid ones', async () => {
    const existing = await insertUser(t.database.handle.db)
    const { valid, items } = mixedBatch(existing.email)
    const before = await userCount()

    const response = await t.request('POST', '/v1/users', { token: supervisor.token, body: items })

    expect(response.status).toBe(200)
    const { result, summary } = response.body
    expect(summary).toEqual({ total: 8, created: 3, failed: 5 })
    expect(result.map((r: any) => [r.index, r.status])).toEqual([
      [0, 201],
      [1, 400],
      [2, 201],
      [3, 409],
      [4, 409],
      [5, 403],
      [6, 400],
      [7, 201],
    ])
    expect(result[1].error).toMatchObject({
      code: 400,
      reason: 'validation_failed',
      attribute: { email: expect.any(String) },
    })
    expect(result[3].error).toMatchObject({
      code: 409,
      reason: 'email_taken',
      attribute: { email: 'already exists' },
    })
    expect(result[3].error.message).toContain('already exists')
    expect(result[4].error).toMatchObject({ code: 409, reason: 'email_taken' })
    expect(result[4].error.message).toContain('already exists')
    expect(result[5].error).toMatchObject({
      code: 403,
      reason: 'role_exceeds_caller',
      attribute: { roleId: expect.any(String) },
    })
    expect(result[6].error).toMatchObject({
      code: 400,
      reason: 'validation_failed',
      attribute: { personalTelephone: expect.any(String) },
    })
    for (const failed of [1, 3, 4, 5, 6]) expect(result[failed].result).toBeUndefined()

    // Each created row carries the full user record, as a single create returns it.
    const first = result[0].result
    expect(first).toMatchObject({
      email: valid[0],
      roleId: ROLE_IDS.platformUser,
      firstName: 'Ada',
      personalTelephone: '+14155550100',
      status: 'enabled',
      hasPassword: false,
      createdBy: supervisor.id,
    })
    expect(first.aliasPlatformUserId).toMatch(/^\d+$/)
    // Time-ordered UUIDv7 ids, as for every new row (docs/api.md#conventions).
    expect(first.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(first.id < result[2].result.id).toBe(true)
    expect(result[7].result).toMatchObject({ status: 'pending', externalId: 'crm-42' })

    expect(await userCount()).toBe(before + 3)
    for (const [i, email] of valid.entries()) {
      const found = await findByEmail(email!)
      expect(found.status).toBe(200)
      expect(found.body.result[0].id).toBe(result[[0, 2, 7][i]!].result.id)
    }
    // The existing user is still there once, untouched.
    const again = await findByEmail(existing.email)
    expect(again.body.result).toHaveLength(1)
    expect(again.body.result[0].id).toBe(existing.id)
  })

  it('refuses more than 1,000 items with 413 too_many_items and stores nothing', async () => {
    const before = await userCount()
    const items = Array.from({ length: 1001 }, () => ({
      email: uniqueEmail('over'),
      roleId: ROLE_IDS.platformUser,
    }))
    const response = await t.request('POST', '/v1/users', { token: adminToken, body: items })
    expect(response.status).toBe(413)
    expect(response.body.error).toMatchObject({ code: 413, reason: 'too_many_items' })
    expect(await userCount()).toBe(before)
    expect((await findByEmail(items[0]!.email)).status).toBe(404)
  })

  it('takes exactly 1,000 items', async () => {
    const items = Array.from({ length: 1000 }, () => ({
      email: uniqueEmail('full'),
      roleId: ROLE_IDS.platformUser,
    }))
    const response = await t.request('POST', '/v1/users', { token: adminToken, body: items })
    expect(response.status).toBe(200)
    expect(response.body.summary).toEqual({ total: 1000, created: 1000, failed: 0 })
    expect((await findByEmail(items[999]!.email)).status).toBe(200)
  })

  it('dryRun gives the same per-row answers (200 for the valid rows) and writes nothing', async () => {
    const existing = await insertUser(t.database.handle.db)
    const { valid, items } = mixedBatch(existing.email)
    const before = await userCount()

    const response = await t.request('POST', '/v1/users?dryRun=true', {
      token: supervisor.token,
      body: items,
    })

    expect(response.status).toBe(200)
    expect(response.body.result.map((r: any) => r.status)).toEqual([200, 400, 200, 409, 409, 403, 400, 200])
    expect(response.body.result[3].error.reason).toBe('email_taken')
    expect(response.body.result[4].error.reason).toBe('email_taken')
    expect(response.body.summary).toEqual({ total: 8, created: 0, failed: 5, dryRun: true })
    expect(await userCount()).toBe(before)
    for (const email of valid) expect((await findByEmail(email!)).status).toBe(404)

    // The real run afterwards matches what the dry run announced.
    const real = await t.request('POST', '/v1/users', { token: supervisor.token, body: items })
    expect(real.body.result.map((r: any) => r.status)).toEqual([201, 400, 201, 409, 409, 403, 400, 201])
  })

  it('needs MANAGE_ALL_USERS somewhere, as a single create does', async () => {
    const agent = await asMember(ROLE_IDS.agent)
    const items = [{ email: uniqueEmail('nope'), roleId: ROLE_IDS.platformUser }]
    const response = await t.request('POST', '/v1/users', { token: agent.token, body: items })
    expect(response.status).toBe(403)
    expect(response.body.error.reason).toBe('permission_denied')
    expect((await findByEmail(items[0]!.email)).status).toBe(404)
  })

  it('drops unknown fields and never takes a password from a row', async () => {
    const email = uniqueEmail('extra')
    const response = await t.request('POST', '/v1/users', {
      token: adminToken,
      body: [{ email, roleId: ROLE_IDS.platformUser, password: 'a-password-123', id: 'x', shoeSize: 44 }],
    })
    expect(response.body.result[0].status).toBe(201)
    expect(response.body.result[0].result.hasPassword).toBe(false)
    expect(response.body.result[0].result).not.toHaveProperty('shoeSize')
  })

  it('replays a retried array sent with the same Idempotency-Key instead of running it again', async () => {
    const items = [{ email: uniqueEmail('retry'), roleId: ROLE_IDS.platformUser }]
    const headers = { 'idempotency-key': `bulk-${uniqueEmail('key')}` }
    const first = await t.request('POST', '/v1/users', { token: adminToken, body: items, headers })
    const again = await t.request('POST', '/v1/users', { token: adminToken, body: items, headers })
    expect(first.body.result[0].status).toBe(201)
    expect(again.status).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toEqual(first.body)
  })

  it('still creates a single user from a JSON object', async () => {
    const email = uniqueEmail('single')
    const response = await t.request('POST', '/v1/users', {
      token: adminToken,
      body: { email, roleId: ROLE_IDS.platformUser },
    })
    expect(response.status).toBe(201)
    expect(response.body.result.email).toBe(email)
  })

  it('an empty array is an empty answer', async () => {
    const response = await t.request('POST', '/v1/users', { token: adminToken, body: [] })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ result: [], summary: { total: 0, created: 0, failed: 0 } })
  })

  it('rows that are not objects fail on their own', async () => {
    const email = uniqueEmail('ok')
    const response = await t.request('POST', '/v1/users', {
      token: adminToken,
      body: [null, 'text', { email, roleId: ROLE_IDS.platformUser }, [1]],
    })
    expect(response.body.result.map((r: any) => r.status)).toEqual([400, 400, 201, 400])
  })
})

describe('bulk rows that name a tenant membership', () => {
  it('makes each new user a member with the status asked for; invited rows queue the invitation e-mail', async () => {
    const [invited, accepted, pending] = [uniqueEmail('inv'), uniqueEmail('acc'), uniqueEmail('pend')]
    const membership = { tenantId, tenantRoleId: ROLE_IDS.agent }
    const response = await t.request('POST', '/v1/users', {
      token: supervisor.token,
      body: [
        { email: invited, roleId: ROLE_IDS.platformUser, ...membership, tenantStatus: 'invited' },
        { email: accepted, roleId: ROLE_IDS.platformUser, ...membership, tenantStatus: 'accepted' },
        { email: pending, roleId: ROLE_IDS.platformUser, ...membership },
      ],
    })
    expect(response.body.result.map((r: any) => r.status)).toEqual([201, 201, 201])
    const [invitedId, acceptedId, pendingId] = response.body.result.map((r: any) => r.result.id)

    const member = (userId: string) =>
      t.request('GET', `/v1/tenants/${tenantId}/users/${userId}`, { token: adminToken })
    const invitedRecord = (await member(invitedId)).body.result
    expect(invitedRecord).toMatchObject({
      email: invited,
      roleId: ROLE_IDS.agent,
      status: 'invited',
      invitationStatus: 'invited',
      invitationEmailStatus: 'queued',
      invitationToken: null,
    })
    expect(invitedRecord.invitationExpiryDate).not.toBeNull()
    expect((await member(acceptedId)).body.result).toMatchObject({
      status: 'accepted',
      invitationEmailStatus: null,
    })
    expect((await member(acceptedId)).body.result.activeExtension).not.toBeNull()
    expect((await member(pendingId)).body.result).toMatchObject({ status: 'pending', activeExtension: null })

    // Exactly one e-mail, to the invitee, naming the tenant and the role.
    const mail = await t.database.handle.db
      .selectFrom('outbox')
      .select(['payload'])
      .where('tenant_id', '=', tenantId)
      .execute()
    const toInvitees = mail.filter((m) => [invited, accepted, pending].includes((m.payload as any).to))
    expect(toInvitees).toHaveLength(1)
    expect(toInvitees[0]!.payload).toMatchObject({ to: invited, roleName: 'Agent', userId: invitedId })
  })

  it('queues one e-mail per invited row of a batch, each openable by the worker and carrying its member’s token', async () => {
    const emails = Array.from({ length: 30 }, () => uniqueEmail('inv-batch'))
    const response = await t.request('POST', '/v1/users', {
      token: supervisor.token,
      body: emails.map((email) => ({
        email,
        roleId: ROLE_IDS.platformUser,
        tenantId,
        tenantRoleId: ROLE_IDS.agent,
        tenantStatus: 'invited',
      })),
    })
    expect(response.body.summary).toEqual({ total: 30, created: 30, failed: 0 })
    const ids = new Map<string, string>(response.body.result.map((r: any) => [r.result.email, r.result.id]))

    const mail = await t.database.handle.db
      .selectFrom('outbox')
      .select(['id', 'payload', 'status', 'attempts', 'kind', 'next_attempt_at', 'locked_until'])
      .where('tenant_id', '=', tenantId)
      .execute()
    const ours = mail.filter((m) => emails.includes((m.payload as any).to))
    expect(ours).toHaveLength(30)
    const memberships = await t.database.handle.db
      .selectFrom('tenant_users')
      .select(['user_id', 'invitation_token_hash'])
      .where('tenant_id', '=', tenantId)
      .where('user_id', 'in', [...ids.values()])
      .execute()
    const hashes = new Map(memberships.map((m) => [m.user_id, m.invitation_token_hash]))
    for (const row of ours) {
      expect(row).toMatchObject({
        status: 'queued',
        attempts: 0,
        kind: 'invitation_email',
        locked_until: null,
      })
      // What the outbox worker does with a claimed row: the envelope opens with this row's id only.
      const { facts, token } = openInvitationMail(t.ctx.keys, row.id, row.payload as Record<string, unknown>)
      expect(facts).toMatchObject({ tenantId, userId: ids.get(facts.to), roleName: 'Agent' })
      expect(invitationTokenHash(token)).toBe(hashes.get(facts.userId))
      expect(() =>
        openInvitationMail(
          t.ctx.keys,
          ours[0] === row ? ours[1]!.id : ours[0]!.id,
          row.payload as Record<string, unknown>,
        ),
      ).toThrow()
    }
  })

  it('applies the role ceiling and the tenant checks per row, and a row that fails them creates no user', async () => {
    const elsewhere = (await createTenantAsAdmin(t)).id
    const emails = [
      uniqueEmail('admin-role'),
      uniqueEmail('unseen'),
      uniqueEmail('no-role'),
      uniqueEmail('agent'),
    ]
    const response = await t.request('POST', '/v1/users', {
      token: supervisor.token,
      body: [
        { email: emails[0], roleId: ROLE_IDS.platformUser, tenantId, tenantRoleId: ROLE_IDS.administrator },
        {
          email: emails[1],
          roleId: ROLE_IDS.platformUser,
          tenantId: elsewhere,
          tenantRoleId: ROLE_IDS.agent,
        },
        { email: emails[2], roleId: ROLE_IDS.platformUser, tenantId },
        { email: emails[3], roleId: ROLE_IDS.platformUser, tenantId, tenantRoleId: ROLE_IDS.supervisor },
      ],
    })
    const result = response.body.result
    expect(result.map((r: any) => r.status)).toEqual([403, 404, 400, 201])
    expect(result[0].error).toMatchObject({
      reason: 'role_exceeds_caller',
      attribute: { tenantRoleId: expect.any(String) },
    })
    expect(result[1].error.reason).toBe('tenant_not_found')
    expect(result[2].error).toMatchObject({
      reason: 'validation_failed',
      attribute: { tenantRoleId: expect.any(String) },
    })
    for (const email of emails.slice(0, 3)) expect((await findByEmail(email!)).status).toBe(404)
    expect((await findByEmail(emails[3]!)).status).toBe(200)
  })
})
