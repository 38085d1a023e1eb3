import { beforeAll, describe, expect, it } from 'vitest'
import { REGIONS, ROLE_IDS } from '../../../src/access/permissions.js'
import {
  createTenantAsAdmin,
  insertUser,
  memberWithToken,
  REGION_ID,
  uniqueName,
} from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const t = useTestApp()
let token: string
let adminId: string
let platformId: string

beforeAll(async () => {
  token = await t.adminToken()
  const login = await t.request('POST', '/v1/login', { token })
  adminId = login.body.result.userId
  platformId = t.ctx.platform.id
})

async function countTenants(): Promise<number> {
  const row = await t.database.handle.db
    .selectFrom('tenants')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

describe('POST /v1/tenants', () => {
  it('creates a root tenant with every field of the brief, typed and defaulted', async () => {
    const name = uniqueName('Acme')
    const response = await t.request('POST', '/v1/tenants', {
      token,
      body: { name, regionId: REGION_ID, description: 'Main contact centre' },
    })
    expect(response.status).toBe(201)
    const tenant = response.body.result
    expect(response.headers.location).toBe(`/v1/tenants/${tenant.id}`)
    expect(Object.keys(tenant).sort()).toEqual(
      [
        'id',
        'name',
        'description',
        'regionId',
        'parentId',
        'parentIds',
        'parent',
        'childIds',
        'adminUserId',
        'createdBy',
        'updatedBy',
        'created',
        'updated',
        'active',
        'timezone',
        'defaultIdentityProvider',
        'cxengageIdentityProvider',
        'clientLogLevel',
        'outboundIntegrationId',
        'capacityRuleId',
        // The second-factor policy (docs/security.md, "Policy"); the effective one on a single tenant.
        'mfaPolicy',
        'mfaGraceDays',
        'mfaAcceptIdp',
        'mfaPolicyEffective',
      ].sort(),
    )
    expect(tenant.id).toMatch(UUID)
    expect(tenant.name).toBe(name)
    expect(tenant.description).toBe('Main contact centre')
    expect(tenant.regionId).toBe(REGION_ID)
    expect(tenant.parentId).toBe(platformId)
    expect(tenant.parentIds).toEqual([platformId])
    expect(tenant.parent).toEqual({ id: platformId, name: 'Platform' })
    expect(tenant.childIds).toEqual([])
    expect(tenant.adminUserId).toBe(adminId)
    expect(tenant.createdBy).toBe(adminId)
    expect(tenant.updatedBy).toBe(adminId)
    expect(tenant.created).toMatch(ISO_Z)
    expect(tenant.created).toBe(tenant.updated)
    expect(tenant.active).toBe(true)
    expect(tenant.timezone).toBe('UTC')
    expect(tenant.defaultIdentityProvider).toBeNull()
    expect(tenant.cxengageIdentityProvider).toBe('enabled')
    expect(tenant.clientLogLevel).toBeNull()
    expect(tenant.outboundIntegrationId).toBeNull()
    expect(tenant.capacityRuleId).toBeNull()

    const read = await t.request('GET', `/v1/tenants/${tenant.id}`, { token })
    expect(read.status).toBe(200)
    expect(read.body.result).toEqual(tenant)
  })

  it('creates a disabled tenant when asked, with a time zone, including backward-compatible links', async () => {
    const response = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName(), regionId: REGION_ID, active: false, timezone: 'US/Eastern' },
    })
    expect(response.status).toBe(201)
    expect(response.body.result.active).toBe(false)
    expect(response.body.result.timezone).toBe('US/Eastern')
  })

  it('builds the ancestor chain of sub-tenants and lists children on the parent', async () => {
    const root = await createTenantAsAdmin(t)
    const child = await createTenantAsAdmin(t, { parentId: root.id })
    const grandchild = await createTenantAsAdmin(t, { parentId: child.id })
    expect(child.parentId).toBe(root.id)
    expect(child.parent).toEqual({ id: root.id, name: root.name })
    expect(child.parentIds).toEqual([platformId, root.id])
    expect(grandchild.parentIds).toEqual([platformId, root.id, child.id])

    const parent = await t.request('GET', `/v1/tenants/${root.id}`, { token })
    expect(parent.body.result.childIds).toEqual([child.id])
    const middle = await t.request('GET', `/v1/tenants/${child.id}`, { token })
    expect(middle.body.result.childIds).toEqual([grandchild.id])
  })

  it('refuses names that collide after normalization, and stores the trimmed original', async () => {
    const base = uniqueName('Collide')
    const first = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: `  ${base}  `, regionId: REGION_ID },
    })
    expect(first.status).toBe(201)
    expect(first.body.result.name).toBe(base)
    for (const variant of [base.toUpperCase(), ` ${base.toLowerCase()} `, base.replace(' ', '   ')]) {
      const again = await t.request('POST', '/v1/tenants', {
        token,
        body: { name: variant, regionId: REGIONS[3]!.id },
      })
      expect(again.status).toBe(409)
      expect(again.body.error.reason).toBe('tenant_name_taken')
      expect(again.body.error.code).toBe(409)
      expect(again.body.error.message).toContain('already exists')
      expect(again.body.error.attribute).toEqual({ name: 'already exists' })
    }
  })

  it('lets exactly one of 20 concurrent creates of one name win', async () => {
    const name = uniqueName('Race')
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request('POST', '/v1/tenants', {
          token,
          body: { name: i % 2 ? name.toUpperCase() : name, regionId: REGION_ID },
        }),
      ),
    )
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1)
    expect(responses.filter((r) => r.status === 409)).toHaveLength(19)
  })

  it('keeps childIds exact under 20 concurrent sub-tenant creates', async () => {
    const parent = await createTenantAsAdmin(t)
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.request('POST', '/v1/tenants', {
          token,
          body: { name: uniqueName('Child'), regionId: REGION_ID, parentId: parent.id },
        }),
      ),
    )
    expect(responses.every((r) => r.status === 201)).toBe(true)
    const ids = responses.map((r) => r.body.result.id).sort()
    const read = await t.request('GET', `/v1/tenants/${parent.id}`, { token })
    expect([...read.body.result.childIds].sort()).toEqual(ids)
  })

  it.each([
    ['unknown regionId', { regionId: '00000000-0000-4000-8000-000000000000' }, 'regionId'],
    ['unknown parentId', { parentId: '00000000-0000-4000-8000-000000000000' }, 'parentId'],
    ['missing name', { name: undefined }, 'name'],
    ['invalid timezone', { timezone: 'Mars/Olympus_Mons' }, 'timezone'],
    ['256-character name', { name: 'x'.repeat(256) }, 'name'],
    ['name of only spaces', { name: '     ' }, 'name'],
    ['name with a control character', { name: 'Acme\u0007Corp' }, 'name'],
    ['name that is a number', { name: 42 }, 'name'],
    ['regionId that is not a UUID', { regionId: 'us-east-1' }, 'regionId'],
    ['unknown adminUserId', { adminUserId: '00000000-0000-4000-8000-000000000000' }, 'adminUserId'],
    ['description over 1,000 characters', { description: 'd'.repeat(1001) }, 'description'],
  ])('answers 400 naming the field for %s, and stores nothing', async (_label, change, field) => {
    const before = await countTenants()
    const body: Record<string, unknown> = { name: uniqueName(), regionId: REGION_ID, ...change }
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key]
    const response = await t.request('POST', '/v1/tenants', { token, body })
    expect(response.status).toBe(400)
    expect(response.body.error.reason).toBe('validation_failed')
    expect(response.body.error.attribute).toHaveProperty(field)
    expect(await countTenants()).toBe(before)
  })

  it('ignores unknown and read-only fields instead of failing or storing them', async () => {
    const response = await t.request('POST', '/v1/tenants', {
      token,
      body: {
        name: uniqueName(),
        regionId: REGION_ID,
        id: '00000000-0000-4000-8000-000000000000',
        color: 'red',
      },
    })
    expect(response.status).toBe(201)
    expect(response.body.result.id).not.toBe('00000000-0000-4000-8000-000000000000')
    expect(response.body.result).not.toHaveProperty('color')
  })
})

describe('tenant permissions', () => {
  it('answers 401 without credentials, with a wrong password, and with an expired token', async () => {
    const none = await t.request('POST', '/v1/tenants', { body: { name: uniqueName(), regionId: REGION_ID } })
    expect(none.status).toBe(401)
    expect(none.headers['www-authenticate']).toContain('Bearer')
    expect(none.body.error.reason).toBe('unauthorized')

    const wrong = await t.request('GET', '/v1/tenants', {
      authorization: `Basic ${Buffer.from('admin@tenantry.test:wrong-password').toString('base64')}`,
    })
    expect(wrong.status).toBe(401)

    const short = await t.request('POST', '/v1/tokens', {
      body: { username: 'admin@tenantry.test', password: 'admin-password-for-tests', ttl: 60 },
    })
    t.clock.advance(61_000)
    const expired = await t.request('GET', '/v1/tenants', { token: short.body.token })
    expect(expired.status).toBe(401)
    expect(expired.body.error.reason).toBe('unauthorized')
  })

  it('answers 403 to a caller without MANAGE_TENANT', async () => {
    const tenant = await createTenantAsAdmin(t)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const root = await t.request('POST', '/v1/tenants', {
      token: agent.token,
      body: { name: uniqueName(), regionId: REGION_ID },
    })
    expect(root.status).toBe(403)
    expect(root.body.error.reason).toBe('permission_denied')
    const sub = await t.request('POST', '/v1/tenants', {
      token: agent.token,
      body: { name: uniqueName(), regionId: REGION_ID, parentId: tenant.id },
    })
    expect(sub.status).toBe(403)
  })

  it('lets a tenant Administrator create sub-tenants but not root tenants, and see only its subtree', async () => {
    const tenant = await createTenantAsAdmin(t)
    const other = await createTenantAsAdmin(t)
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const sub = await t.request('POST', '/v1/tenants', {
      token: admin.token,
      body: { name: uniqueName(), regionId: REGION_ID, parentId: tenant.id },
    })
    expect(sub.status).toBe(201)
    expect(sub.body.result.adminUserId).toBe(admin.id)
    const root = await t.request('POST', '/v1/tenants', {
      token: admin.token,
      body: { name: uniqueName(), regionId: REGION_ID },
    })
    expect(root.status).toBe(403)

    const list = await t.request('GET', '/v1/tenants', { token: admin.token })
    expect(list.status).toBe(200)
    expect(list.body.result.map((x: { id: string }) => x.id).sort()).toEqual(
      [tenant.id, sub.body.result.id].sort(),
    )
    const hidden = await t.request('GET', `/v1/tenants/${other.id}`, { token: admin.token })
    expect(hidden.status).toBe(404)
    expect(hidden.body.error.reason).toBe('tenant_not_found')
  })

  it('does not let a member of a disabled tenant act there', async () => {
    const tenant = await createTenantAsAdmin(t)
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const off = await t.request('PUT', `/v1/tenants/${tenant.id}`, { token, body: { active: false } })
    expect(off.status).toBe(200)
    const sub = await t.request('POST', '/v1/tenants', {
      token: admin.token,
      body: { name: uniqueName(), regionId: REGION_ID, parentId: tenant.id },
    })
    expect(sub.status).toBe(400)
    expect(sub.body.error.attribute).toHaveProperty('parentId')
  })
})

describe('GET and PUT /v1/tenants', () => {
  it('lists by region and pages with a cursor', async () => {
    const region = REGIONS[5]!.id
    const created = []
    for (let i = 0; i < 3; i++) created.push(await createTenantAsAdmin(t, { regionId: region }))
    const all = await t.request('GET', `/v1/tenants?regionId=${region}`, { token })
    expect(all.body.result.map((x: { id: string }) => x.id)).toEqual(created.map((c) => c.id))
    expect(all.body).not.toHaveProperty('nextCursor')

    const first = await t.request('GET', `/v1/tenants?regionId=${region}&limit=2`, { token })
    expect(first.body.result).toHaveLength(2)
    const second = await t.request(
      'GET',
      `/v1/tenants?regionId=${region}&limit=2&cursor=${first.body.nextCursor}`,
      { token },
    )
    expect(second.body.result.map((x: { id: string }) => x.id)).toEqual([created[2]!.id])
    expect(second.body).not.toHaveProperty('nextCursor')
  })

  it('updates fields partially and moves `updated` but not `created`', async () => {
    const tenant = await createTenantAsAdmin(t)
    t.clock.advance(5_000)
    const response = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token,
      body: {
        description: 'Renamed',
        clientLogLevel: 'debug',
        timezone: 'Europe/Dublin',
        parentId: 'ignored',
      },
    })
    expect(response.status).toBe(200)
    const updated = response.body.result
    expect(updated.description).toBe('Renamed')
    expect(updated.clientLogLevel).toBe('debug')
    expect(updated.timezone).toBe('Europe/Dublin')
    expect(updated.name).toBe(tenant.name)
    expect(updated.parentId).toBe(tenant.parentId)
    expect(updated.created).toBe(tenant.created)
    expect(new Date(updated.updated).getTime()).toBeGreaterThan(new Date(tenant.updated as string).getTime())

    const bad = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token,
      body: { clientLogLevel: 'loud' },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('clientLogLevel')
  })

  it('refuses renaming onto another tenant’s name', async () => {
    const a = await createTenantAsAdmin(t)
    const b = await createTenantAsAdmin(t)
    const response = await t.request('PUT', `/v1/tenants/${b.id}`, {
      token,
      body: { name: a.name.toUpperCase() },
    })
    expect(response.status).toBe(409)
    expect(response.body.error.reason).toBe('tenant_name_taken')
  })

  it('lets a platform user with no permissions see nothing', async () => {
    await createTenantAsAdmin(t)
    const user = await insertUser(t.database.handle.db)
    const userToken = await t.tokenFor(user.email, user.password)
    const list = await t.request('GET', '/v1/tenants', { token: userToken })
    expect(list.status).toBe(200)
    expect(list.body.result).toEqual([])
  })
})
