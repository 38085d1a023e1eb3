import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import {
  createTenantAsAdmin,
  memberWithToken,
  REGION_ID,
  uniqueEmail,
  uniqueName,
} from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * The audit trail (docs/webhooks.md) and offboarding/erasure (docs/product.md#offboarding-and-erasure): every write path leaves one event in the
 * change's transaction — and a change that fails leaves none —, the read endpoints filter and page, and
 * an erasure leaves the person's e-mail and names in no table at all.
 */
const t = useTestApp()
let admin: string
let adminId: string

beforeAll(async () => {
  admin = await t.adminToken()
  const row = await t.ctx.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', t.config.adminEmail)
    .executeTakeFirstOrThrow()
  adminId = row.id
})

async function events(query: Record<string, string> = {}) {
  const qs = new URLSearchParams(query).toString()
  const response = await t.request('GET', `/v1/audit-events${qs ? `?${qs}` : ''}`, { token: admin })
  expect(response.status).toBe(200)
  return response.body.result as any[]
}
const countEvents = async () =>
  Number(
    (
      await t.ctx.db
        .selectFrom('audit_events')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

describe('audit events on every write', () => {
  it('tenant.created and tenant.updated, with the actor, request id and changes; a refused change writes none', async () => {
    const tenant = await createTenantAsAdmin(t, { name: uniqueName('Audited') })
    const [created] = await events({ targetId: tenant.id, action: 'tenant.created' })
    expect(created).toMatchObject({
      action: 'tenant.created',
      tenantId: tenant.id,
      actor: { type: 'user', id: adminId },
      target: { type: 'tenant', id: tenant.id },
    })
    expect(created.changes.name).toEqual([null, tenant.name])
    expect(created.requestId).toEqual(expect.any(String))
    expect(created.ip).toEqual(expect.any(String))

    const put = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: admin,
      body: { description: 'Night shift' },
    })
    expect(put.status).toBe(200)
    const [updated] = await events({ targetId: tenant.id, action: 'tenant.updated' })
    expect(updated.changes).toEqual({ description: ['', 'Night shift'] })

    // a duplicate name is refused by the database inside the transaction: no event
    const before = await countEvents()
    const dup = await t.request('POST', '/v1/tenants', {
      token: admin,
      body: { name: tenant.name, regionId: REGION_ID },
    })
    expect(dup.status).toBe(409)
    expect(await countEvents()).toBe(before)
  })

  it('user.created, then one event for an update of names, status, role and password (masked)', async () => {
    const email = uniqueEmail('audited')
    const created = await t.request('POST', '/v1/users', {
      token: admin,
      body: { email, roleId: ROLE_IDS.platformUser, firstName: 'Ada' },
    })
    expect(created.status).toBe(201)
    const id = created.body.result.id
    const put = await t.request('PUT', `/v1/users/${id}`, {
      token: admin,
      body: {
        lastName: 'Lovelace',
        status: 'disabled',
        roleId: ROLE_IDS.platformAdministrator,
        password: 'a long enough password',
      },
    })
    expect(put.status).toBe(200)
    const list = await events({ targetId: id })
    const byAction = Object.fromEntries(list.map((e) => [e.action, e]))
    expect(byAction['user.created'].changes.email).toEqual([null, email])
    // One change to one user is one event holding every field it changed (docs/webhooks.md).
    expect(list.map((e) => e.action).sort()).toEqual(['user.created', 'user.status_changed'])
    expect(byAction['user.status_changed'].changes).toEqual({
      lastName: ['', 'Lovelace'],
      status: ['enabled', 'disabled'],
      roleId: [ROLE_IDS.platformUser, ROLE_IDS.platformAdministrator],
      password: [null, '********'],
    })
    expect(JSON.stringify(list)).not.toContain('long enough password')

    // same e-mail again: 409 inside the transaction, no event
    const before = await countEvents()
    const dup = await t.request('POST', '/v1/users', {
      token: admin,
      body: { email, roleId: ROLE_IDS.platformUser },
    })
    expect(dup.status).toBe(409)
    expect(await countEvents()).toBe(before)
  })

  it('membership events: invited, status_changed, role_changed, removed; integration and API key events, by a key too', async () => {
    const tenant = await createTenantAsAdmin(t)
    const email = uniqueEmail('member')
    await t.request('POST', '/v1/users', { token: admin, body: { email, roleId: ROLE_IDS.platformUser } })
    const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin,
      body: { email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(invited.status).toBe(201)
    const userId = invited.body.result.userId
    await t.request('PUT', `/v1/tenants/${tenant.id}/users/${userId}`, {
      token: admin,
      body: { roleId: ROLE_IDS.supervisor },
    })
    await t.request('PUT', `/v1/tenants/${tenant.id}/users/${userId}`, {
      token: admin,
      body: { status: 'pending' },
    })
    const removed = await t.request('DELETE', `/v1/tenants/${tenant.id}/users/${userId}`, { token: admin })
    expect(removed.status).toBe(204)
    expect(
      (await t.request('GET', `/v1/tenants/${tenant.id}/users/${userId}`, { token: admin })).status,
    ).toBe(404)
    // the person keeps its platform account
    expect((await t.request('GET', `/v1/users/${userId}`, { token: admin })).status).toBe(200)

    const integration = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token: admin,
      body: {
        type: 'rest',
        name: 'CRM',
        active: true,
        properties: { endpointPrefix: 'https://crm.example.com', password: 's3cret-value' },
      },
    })
    expect(integration.status).toBe(201)
    const integrationId = integration.body.result.id
    {
      await t.request('PUT', `/v1/tenants/${tenant.id}/integrations/${integrationId}`, {
        token: admin,
        body: { properties: { password: 'n3w-secret' } },
      })
      const deleted = await t.request('DELETE', `/v1/tenants/${tenant.id}/integrations/${integrationId}`, {
        token: admin,
      })
      expect(deleted.status).toBe(204)
      expect(
        (await t.request('GET', `/v1/tenants/${tenant.id}/integrations/${integrationId}`, { token: admin }))
          .status,
      ).toBe(404)
      const rows = await t.ctx.db
        .selectFrom('integrations')
        .selectAll()
        .where('id', '=', integrationId)
        .execute()
      expect(rows).toHaveLength(0)
    }

    const key = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
      token: admin,
      body: { name: 'Robot', roleId: ROLE_IDS.administrator },
    })
    expect(key.status).toBe(201)
    const basic = `Basic ${Buffer.from(`${key.body.result.id}:${key.body.result.secret}`).toString('base64')}`
    const byKey = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      authorization: basic,
      body: { description: 'by key' },
    })
    expect(byKey.status).toBe(200)
    await t.request('PUT', `/v1/tenants/${tenant.id}/api-keys/${key.body.result.id}`, {
      token: admin,
      body: { status: 'disabled' },
    })

    const response = await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?limit=1000`, {
      token: admin,
    })
    expect(response.status).toBe(200)
    const actions = (response.body.result as any[]).map((e) => e.action)
    for (const action of [
      'membership.invited',
      'membership.role_changed',
      'membership.status_changed',
      'membership.removed',
      'api_key.created',
      'api_key.updated',
      'tenant.updated',
    ]) {
      expect(actions).toContain(action)
    }
    {
      const integrationEvents = (response.body.result as any[]).filter((e) => e.target.id === integrationId)
      expect(integrationEvents.map((e) => e.action).sort()).toEqual([
        'integration.created',
        'integration.deleted',
        'integration.updated',
      ])
      expect(JSON.stringify(integrationEvents)).not.toMatch(/s3cret|n3w-secret/)
      expect(
        integrationEvents.find((e) => e.action === 'integration.updated').changes['properties.password'],
      ).toEqual(['********', '********'])
    }
    const keyWrite = (response.body.result as any[]).find(
      (e) => e.action === 'tenant.updated' && e.changes.description?.[1] === 'by key',
    )
    expect(keyWrite.actor).toEqual({ type: 'apiKey', id: key.body.result.id })
  })
})

describe('login lockout', () => {
  it('writes user.login_locked once when a user name reaches the failure limit', async () => {
    const email = uniqueEmail('locked')
    const created = await t.request('POST', '/v1/users', {
      token: admin,
      body: { email, roleId: ROLE_IDS.platformUser },
    })
    for (let i = 0; i < 12; i++) {
      await t.request('POST', '/v1/tokens', { body: { username: email, password: `wrong ${i}` } })
    }
    const locked = await events({ targetId: created.body.result.id, action: 'user.login_locked' })
    expect(locked).toHaveLength(1)
    expect(locked[0].actor).toEqual({ type: 'system', id: null })
  })
})

describe('reading the trail', () => {
  it('newest first, filters, keyset pages; a tenant sees itself and its sub-tenants only; permission needed', async () => {
    const parent = await createTenantAsAdmin(t)
    const child = await createTenantAsAdmin(t, { parentId: parent.id })
    const other = await createTenantAsAdmin(t)
    for (const d of ['one', 'two', 'three']) {
      await t.request('PUT', `/v1/tenants/${child.id}`, { token: admin, body: { description: d } })
    }
    const all = (await t.request('GET', `/v1/tenants/${parent.id}/audit-events`, { token: admin })).body
      .result as any[]
    expect(all.map((e) => e.tenantId)).toContain(child.id)
    expect(all.map((e) => e.tenantId)).not.toContain(other.id)
    expect(all.slice(0, 3).map((e) => e.changes.description[1])).toEqual(['three', 'two', 'one'])

    const page1 = await t.request(
      'GET',
      `/v1/tenants/${parent.id}/audit-events?action=tenant.updated&limit=2`,
      { token: admin },
    )
    expect(page1.body.result).toHaveLength(2)
    const page2 = await t.request(
      'GET',
      `/v1/tenants/${parent.id}/audit-events?action=tenant.updated&limit=2&cursor=${page1.body.nextCursor}`,
      { token: admin },
    )
    expect(page2.body.result.map((e: any) => e.changes.description[1])).toEqual(['one'])
    expect(page2.body.nextCursor).toBeUndefined()
    const family = (
      await t.request('GET', `/v1/tenants/${parent.id}/audit-events?action=tenant.*`, { token: admin })
    ).body.result
    expect(new Set(family.map((e: any) => e.action))).toEqual(new Set(['tenant.created', 'tenant.updated']))
    const future = await t.request(
      'GET',
      `/v1/audit-events?since=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`,
      { token: admin },
    )
    expect(future.body.result).toEqual([])

    // an agent of the parent lacks VIEW_AUDIT_LOG; an administrator of the other tenant cannot see it
    const agent = await memberWithToken(t, parent.id, ROLE_IDS.agent)
    expect(
      (await t.request('GET', `/v1/tenants/${parent.id}/audit-events`, { token: agent.token })).status,
    ).toBe(403)
    expect((await t.request('GET', '/v1/audit-events', { token: agent.token })).status).toBe(403)
    const stranger = await memberWithToken(t, other.id, ROLE_IDS.administrator)
    expect(
      (await t.request('GET', `/v1/tenants/${parent.id}/audit-events`, { token: stranger.token })).status,
    ).toBe(404)
    const bad = await t.request('GET', `/v1/audit-events?actorId=nope`, { token: admin })
    expect(bad.status).toBe(400)
  })
})

describe('erasure (docs/product.md#offboarding-and-erasure)', () => {
  it('erases a person: no table holds its e-mail or names afterwards, the id still resolves, the e-mail is free', async () => {
    const tenant = await createTenantAsAdmin(t)
    const email = uniqueEmail('zeta.quill')
    const first = `Zebulon${Date.now().toString(36)}`
    const last = `Quillfeather${Date.now().toString(36)}`
    const createKey = `erase-${Date.now()}`
    const otherKey = `${createKey}-other`
    const created = await t.request('POST', '/v1/users', {
      token: admin,
      headers: { 'idempotency-key': createKey },
      body: {
        email,
        roleId: ROLE_IDS.platformUser,
        firstName: first,
        lastName: last,
        personalTelephone: '+15555550123',
      },
    })
    expect(created.status).toBe(201)
    const id = created.body.result.id
    const other = await t.request('POST', '/v1/users', {
      token: admin,
      headers: { 'idempotency-key': otherKey },
      body: { email: uniqueEmail('bystander'), roleId: ROLE_IDS.platformUser },
    })
    expect(other.status).toBe(201)
    await t.request('PUT', `/v1/users/${id}`, {
      token: admin,
      body: { lastName: `${last}x`, password: 'a long enough password' },
    })
    expect(
      (
        await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
          token: admin,
          body: { email, roleId: ROLE_IDS.agent, status: 'invited' },
        })
      ).status,
    ).toBe(201)
    const userToken = await t.tokenFor(email, 'a long enough password')

    // Nobody erases themselves (issue 29 item 5: 409 self_lockout, like disabling or demoting oneself).
    expect((await t.request('DELETE', `/v1/users/${adminId}`, { token: admin })).status).toBe(409)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    expect((await t.request('DELETE', `/v1/users/${id}`, { token: agent.token })).status).toBe(403)

    const erased = await t.request('DELETE', `/v1/users/${id}`, { token: admin })
    expect(erased.status).toBe(204)
    // The answer stored for replay quoted the person (sealed at rest, so the search below cannot see
    // it): it is gone; another request's stored answer stays.
    const stored = await t.ctx.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', 'in', [createKey, otherKey])
      .execute()
    expect(stored.map((row) => row.key)).toEqual([otherKey])

    // every text-like column of every table
    const columns = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and data_type in ('text', 'character varying', 'jsonb', 'json', 'ARRAY')
    `.execute(t.ctx.db)
    expect(columns.rows.length).toBeGreaterThan(10)
    const tables = new Set(columns.rows.map((c) => c.table_name))
    expect(tables).toEqual(expect.objectContaining({}))
    for (const needle of [email, first, last, '+15555550123']) {
      for (const { table_name, column_name } of columns.rows) {
        const { rows } = await sql<{ n: string }>`
          select count(*) as n from ${sql.table(table_name)} where ${sql.ref(column_name)}::text ilike ${`%${needle}%`}
        `.execute(t.ctx.db)
        expect(Number(rows[0]?.n), `${needle} in ${table_name}.${column_name}`).toBe(0)
      }
    }
    const record = await t.request('GET', `/v1/users/${id}`, { token: admin })
    expect(record.status).toBe(200)
    expect(record.body.result).toMatchObject({ id, status: 'erased', email: '', firstName: '', lastName: '' })
    expect((await t.request('GET', `/v1/users/${id}`, { token: userToken })).status).toBe(401)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}/users/${id}`, { token: admin })).status).toBe(
      404,
    )
    const trail = await events({ targetId: id })
    expect(trail.map((e) => e.action)).toContain('user.erased')
    expect(trail.map((e) => e.action)).toContain('user.created')
    // the e-mail is free again
    expect(
      (await t.request('POST', '/v1/users', { token: admin, body: { email, roleId: ROLE_IDS.platformUser } }))
        .status,
    ).toBe(201)
    expect((await t.request('DELETE', `/v1/users/${id}`, { token: admin })).status).toBe(404)
  })
})
