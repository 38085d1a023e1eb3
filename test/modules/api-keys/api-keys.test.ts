import { createHash } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import {
  createTenantAsAdmin,
  memberWithToken,
  REGION_ID,
  uniqueEmail,
  uniqueName,
} from '../../helpers/fixtures.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/
const KEY_FIELDS = [
  'id',
  'tenantId',
  'name',
  'description',
  'roleId',
  'status',
  'scope',
  'expiresAt',
  'created',
  'createdBy',
  'updated',
  'updatedBy',
].sort()

const t = useTestApp({ clock: new FollowingClock() })
let adminToken: string
let adminId: string

beforeAll(async () => {
  adminToken = await t.adminToken()
  adminId = (await t.request('POST', '/v1/login', { token: adminToken })).body.result.userId
})

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

interface CreatedKey {
  id: string
  secret: string
  authorization: string
  [field: string]: unknown
}

async function createKey(
  tenantId: string,
  roleId: string,
  as: { token?: string; authorization?: string } = {},
) {
  const response = await t.request('POST', `/v1/tenants/${tenantId}/api-keys`, {
    ...(as.token || as.authorization ? as : { token: adminToken }),
    body: { name: uniqueName('Key'), roleId },
  })
  if (response.status !== 201) throw new Error(`key create failed: ${JSON.stringify(response.body)}`)
  const key = response.body.result
  return { ...key, authorization: basic(key.id, key.secret) } as CreatedKey
}

describe('creating, listing and reading API keys', () => {
  it('shows the secret once, stores only its hash, and never lists it', async () => {
    const tenant = await createTenantAsAdmin(t)
    const response = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
      token: adminToken,
      body: { name: '  CRM sync  ', roleId: ROLE_IDS.agent, description: 'Nightly job', status: 'disabled' },
    })
    expect(response.status).toBe(201)
    const key = response.body.result
    expect(response.headers.location).toBe(`/v1/tenants/${tenant.id}/api-keys/${key.id}`)
    expect(Object.keys(key).sort()).toEqual([...KEY_FIELDS, 'secret'].sort())
    expect(key).toMatchObject({
      tenantId: tenant.id,
      name: 'CRM sync',
      description: 'Nightly job',
      roleId: ROLE_IDS.agent,
      status: 'enabled',
      createdBy: adminId,
      updatedBy: adminId,
    })
    expect(key.created).toMatch(ISO_Z)
    expect(key.secret).toMatch(/^[A-Za-z0-9_-]{43,}$/)

    const row = await t.database.handle.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(row)).not.toContain(key.secret)
    expect(row.secret_hash).toBe(createHash('sha256').update(key.secret).digest('base64url'))

    const list = await t.request('GET', `/v1/tenants/${tenant.id}/api-keys`, { token: adminToken })
    expect(list.status).toBe(200)
    expect(list.body.result).toHaveLength(1)
    expect(Object.keys(list.body.result[0]).sort()).toEqual(KEY_FIELDS)
    expect(JSON.stringify(list.body)).not.toContain(key.secret)
    const one = await t.request('GET', `/v1/tenants/${tenant.id}/api-keys/${key.id}`, { token: adminToken })
    expect(one.status).toBe(200)
    expect(one.body.result).not.toHaveProperty('secret')
    expect(one.body.result.id).toBe(key.id)
  })

  it('pages the list with a cursor', async () => {
    const tenant = await createTenantAsAdmin(t)
    const ids = []
    for (let i = 0; i < 3; i++) ids.push((await createKey(tenant.id, ROLE_IDS.agent)).id)
    const first = await t.request('GET', `/v1/tenants/${tenant.id}/api-keys?limit=2`, { token: adminToken })
    expect(first.body.result.map((k: { id: string }) => k.id)).toEqual(ids.slice(0, 2))
    const second = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/api-keys?limit=2&cursor=${first.body.nextCursor}`,
      {
        token: adminToken,
      },
    )
    expect(second.body.result.map((k: { id: string }) => k.id)).toEqual(ids.slice(2))
    expect(second.body).not.toHaveProperty('nextCursor')
  })

  it.each([
    ['a missing name', { name: undefined }, 'name'],
    ['a name of only spaces', { name: '   ' }, 'name'],
    ['an unknown role', { roleId: '00000000-0000-4000-8000-000000000000' }, 'roleId'],
    ['a platform role', { roleId: ROLE_IDS.platformAdministrator }, 'roleId'],
    ['a description over 1,000 characters', { description: 'd'.repeat(1001) }, 'description'],
  ])('answers 400 naming the field for %s, and stores nothing', async (_label, change, field) => {
    const tenant = await createTenantAsAdmin(t)
    const body: Record<string, unknown> = { name: uniqueName('Key'), roleId: ROLE_IDS.agent, ...change }
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key]
    const response = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, { token: adminToken, body })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty([field])
    const list = await t.request('GET', `/v1/tenants/${tenant.id}/api-keys`, { token: adminToken })
    expect(list.body.result).toEqual([])
  })

  it('needs MANAGE_ALL_APP_CREDENTIALS in the tenant, and hides other tenants’ keys', async () => {
    const tenant = await createTenantAsAdmin(t)
    const other = await createTenantAsAdmin(t)
    const key = await createKey(tenant.id, ROLE_IDS.agent)
    const foreignKey = await createKey(other.id, ROLE_IDS.agent)
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    for (const [method, url, body] of [
      ['POST', `/v1/tenants/${tenant.id}/api-keys`, { name: 'x', roleId: ROLE_IDS.agent }],
      ['GET', `/v1/tenants/${tenant.id}/api-keys`, undefined],
      ['PUT', `/v1/tenants/${tenant.id}/api-keys/${key.id}`, { status: 'disabled' }],
    ] as const) {
      const response = await t.request(method, url, { token: supervisor.token, body })
      expect(response.status).toBe(403)
      expect(response.body.error.reason).toBe('permission_denied')
    }
    const elsewhere = await t.request('GET', `/v1/tenants/${other.id}/api-keys`, { token: supervisor.token })
    expect(elsewhere.status).toBe(404)
    expect(elsewhere.body.error.reason).toBe('tenant_not_found')
    // A key addressed through the wrong tenant does not exist there.
    const mismatched = await t.request('GET', `/v1/tenants/${tenant.id}/api-keys/${foreignKey.id}`, {
      token: adminToken,
    })
    expect(mismatched.status).toBe(404)
    expect(mismatched.body.error.reason).toBe('api_key_not_found')
    const bad = await t.request('PUT', `/v1/tenants/${tenant.id}/api-keys/${key.id}`, {
      token: adminToken,
      body: { status: 'paused' },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('status')
  })
})

describe('using an API key', () => {
  it('works as Basic keyId:secret and through POST /v1/tokens while enabled, and is refused once disabled', async () => {
    const tenant = await createTenantAsAdmin(t)
    const key = await createKey(tenant.id, ROLE_IDS.agent)
    expect(
      (await t.request('GET', `/v1/tenants/${tenant.id}`, { authorization: key.authorization })).status,
    ).toBe(200)
    const issued = await t.request('POST', '/v1/tokens', { body: { username: key.id, password: key.secret } })
    expect(issued.status).toBe(200)
    const keyToken = issued.body.token
    expect((await t.request('GET', `/v1/tenants/${tenant.id}`, { token: keyToken })).status).toBe(200)
    const wrong = await t.request('GET', `/v1/tenants/${tenant.id}`, {
      authorization: basic(key.id, 'not-the-secret'),
    })
    expect(wrong.status).toBe(401)

    const off = await t.request('PUT', `/v1/tenants/${tenant.id}/api-keys/${key.id}`, {
      token: adminToken,
      body: { status: 'disabled' },
    })
    expect(off.status).toBe(200)
    expect(off.body.result.status).toBe('disabled')
    for (const auth of [{ authorization: key.authorization }, { token: keyToken }]) {
      const refused = await t.request('GET', `/v1/tenants/${tenant.id}`, auth)
      expect(refused.status).toBe(401)
      expect(refused.body.error.reason).toBe('unauthorized')
      expect(refused.headers['www-authenticate']).toBeDefined()
    }
    expect(
      (await t.request('POST', '/v1/tokens', { body: { username: key.id, password: key.secret } })).status,
    ).toBe(401)

    const on = await t.request('PUT', `/v1/tenants/${tenant.id}/api-keys/${key.id}`, {
      token: adminToken,
      body: { status: 'enabled' },
    })
    expect(on.body.result.status).toBe('enabled')
    expect(
      (await t.request('GET', `/v1/tenants/${tenant.id}`, { authorization: key.authorization })).status,
    ).toBe(200)
  })

  it('acts with its role in its tenant and the sub-tenants', async () => {
    const tenant = await createTenantAsAdmin(t)
    const key = await createKey(tenant.id, ROLE_IDS.administrator)
    const sub = await t.request('POST', '/v1/tenants', {
      authorization: key.authorization,
      body: { name: uniqueName('Sub'), regionId: REGION_ID, parentId: tenant.id },
    })
    expect(sub.status).toBe(201)
    // A key is not a user: the tenant's admin defaults to the user who created the key.
    expect(sub.body.result.adminUserId).toBe(adminId)
    expect(sub.body.result.createdBy).toBe(key.id)
    const read = await t.request('GET', `/v1/tenants/${sub.body.result.id}`, {
      authorization: key.authorization,
    })
    expect(read.status).toBe(200)

    const child = await createKey(sub.body.result.id, ROLE_IDS.supervisor, {
      authorization: key.authorization,
    })
    expect(child.tenantId).toBe(sub.body.result.id)
    expect(child.createdBy).toBe(adminId)
    expect(child.updatedBy).toBe(key.id)

    const user = await t.request('POST', '/v1/users', {
      authorization: key.authorization,
      body: { email: uniqueEmail(), roleId: ROLE_IDS.platformUser },
    })
    expect(user.status).toBe(201)
    expect(user.body.result.createdBy).toBe(key.id)
  })

  it('is refused with 403 beyond its role or above its tenant', async () => {
    const tenant = await createTenantAsAdmin(t)
    const agentKey = await createKey(tenant.id, ROLE_IDS.agent)
    const adminKey = await createKey(tenant.id, ROLE_IDS.administrator)

    const sub = await t.request('POST', '/v1/tenants', {
      authorization: agentKey.authorization,
      body: { name: uniqueName('Sub'), regionId: REGION_ID, parentId: tenant.id },
    })
    expect(sub.status).toBe(403)
    expect(sub.body.error.reason).toBe('permission_denied')

    // A root tenant is created at the platform level, above any key's tenant.
    const root = await t.request('POST', '/v1/tenants', {
      authorization: adminKey.authorization,
      body: { name: uniqueName('Root'), regionId: REGION_ID },
    })
    expect(root.status).toBe(403)
    expect(root.body.error.reason).toBe('permission_denied')

    // A key holds no platform permission: it cannot hand out a platform role that carries any.
    const boss = await t.request('POST', '/v1/users', {
      authorization: adminKey.authorization,
      body: { email: uniqueEmail(), roleId: ROLE_IDS.platformAdministrator },
    })
    expect(boss.status).toBe(403)
    expect(boss.body.error.reason).toBe('role_exceeds_caller')
  })

  it('answers 404 for a tenant it cannot see: another tenant, or its own parent', async () => {
    const parent = await createTenantAsAdmin(t)
    const tenant = await createTenantAsAdmin(t, { parentId: parent.id })
    const other = await createTenantAsAdmin(t)
    const key = await createKey(tenant.id, ROLE_IDS.administrator)
    for (const hidden of [other.id, parent.id]) {
      for (const [method, url, body] of [
        ['GET', `/v1/tenants/${hidden}`, undefined],
        ['PUT', `/v1/tenants/${hidden}`, { description: 'taken over' }],
        ['GET', `/v1/tenants/${hidden}/api-keys`, undefined],
        ['POST', `/v1/tenants/${hidden}/api-keys`, { name: 'x', roleId: ROLE_IDS.agent }],
        ['GET', `/v1/tenants/${hidden}/roles`, undefined],
      ] as const) {
        const response = await t.request(method, url, { authorization: key.authorization, body })
        expect(response.status, `${method} ${url}`).toBe(404)
        expect(response.body.error.reason).toBe('tenant_not_found')
      }
    }
    const list = await t.request('GET', '/v1/tenants', { authorization: key.authorization })
    expect(list.body.result.map((x: { id: string }) => x.id)).toEqual([tenant.id])
  })
})
