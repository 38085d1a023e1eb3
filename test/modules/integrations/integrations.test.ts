import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, memberWithToken } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Creating and reading integrations (docs/product.md#integrations, docs/api.md#integrations): the brief's `attributes` body and the
 * flat body give the same record, reads never show a secret, repeats of a chosen id, permissions.
 */
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const MASK = '********'
const RECORD_FIELDS = [
  'id',
  'tenantId',
  'type',
  'name',
  'description',
  'active',
  'properties',
  'createdBy',
  'updatedBy',
  'created',
  'updated',
].sort()

/** Every secret this file sends; none may ever reach the log. */
const SECRETS: string[] = []
function secret(label: string): string {
  const value = `${label}-${randomUUID()}`
  SECRETS.push(value)
  return value
}

/** The brief's sample bodies, one per type, and what a read must show for them. */
function samples() {
  return {
    salesforce: {
      sent: {
        consumerKey: '3MVG9-consumer-key',
        consumerSecret: secret('sf-consumer-secret'),
        password: secret('sf-password'),
        securityToken: secret('sf-security-token'),
        username: 'crm@example.test',
        loginUrl: 'https://login.example.test',
      },
      shown: {
        consumerKey: '3MVG9-consumer-key',
        consumerSecret: MASK,
        password: MASK,
        securityToken: MASK,
        username: 'crm@example.test',
        loginUrl: 'https://login.example.test',
        pushEnabled: false,
      },
    },
    zendesk: {
      sent: {
        endpointPrefix: 'https://acme.example.test/api/v2/',
        interactionFieldId: '360001234',
        password: secret('zd-password'),
        username: 'tickets@example.test',
        workItems: true,
      },
      shown: {
        endpointPrefix: 'https://acme.example.test/api/v2/',
        interactionFieldId: '360001234',
        password: MASK,
        username: 'tickets@example.test',
        workItems: true,
      },
    },
    rest: {
      sent: { endpointPrefix: 'http://crm.example.test/api', token: secret('rest-token'), username: '' },
      shown: { endpointPrefix: 'http://crm.example.test/api', password: '', token: MASK, username: '' },
    },
  } as const
}

const t = useTestApp()
let token: string
let adminId: string

beforeAll(async () => {
  token = await t.adminToken()
  adminId = (await t.request('POST', '/v1/login', { token })).body.result.userId
})

describe('creating each type with the brief’s body and with the flat body', () => {
  for (const type of ['salesforce', 'zendesk', 'rest'] as const) {
    it(`gives the same ${type} record, with every field of the brief and no secret`, async () => {
      const sample = samples()[type]
      const briefTenant = await createTenantAsAdmin(t)
      const flatTenant = await createTenantAsAdmin(t)
      const id = randomUUID()

      const brief = await t.request('POST', `/v1/tenants/${briefTenant.id}/integrations/${id}`, {
        token,
        body: { attributes: { type, name: type, active: 'true', properties: sample.sent } },
      })
      expect(brief.status).toBe(201)
      expect(brief.headers.location).toBe(`/v1/tenants/${briefTenant.id}/integrations/${id}`)
      const record = brief.body // unwrapped, as the brief says
      expect(Object.keys(record).sort()).toEqual(RECORD_FIELDS)
      expect(record).toMatchObject({
        id,
        tenantId: briefTenant.id,
        type,
        name: type,
        description: null,
        active: true,
        createdBy: adminId,
        updatedBy: adminId,
      })
      expect(record.properties).toEqual(sample.shown)
      expect(record.created).toMatch(ISO_Z)
      expect(record.updated).toBe(record.created)

      const flat = await t.request('POST', `/v1/tenants/${flatTenant.id}/integrations`, {
        token,
        body: { type, name: type, active: true, properties: sample.sent },
      })
      expect(flat.status).toBe(201)
      const flatRecord = flat.body.result
      expect(flatRecord.id).toMatch(UUID)
      expect(flat.headers.location).toBe(`/v1/tenants/${flatTenant.id}/integrations/${flatRecord.id}`)
      const comparable = ({ id: _id, tenantId: _t, created: _c, updated: _u, ...rest }: any) => rest
      expect(comparable(flatRecord)).toEqual(comparable(record))

      // Reads are wrapped and show the same record.
      const one = await t.request('GET', `/v1/tenants/${briefTenant.id}/integrations/${id}`, { token })
      expect(one.status).toBe(200)
      expect(one.body.result).toEqual(record)
      const list = await t.request('GET', `/v1/tenants/${flatTenant.id}/integrations`, { token })
      expect(list.status).toBe(200)
      expect(list.body.result).toEqual([flatRecord])
    })
  }

  it('takes the attributes wrapper on the flat route, and defaults active to false and the name to the type', async () => {
    const tenant = await createTenantAsAdmin(t)
    const response = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token,
      body: { attributes: { type: 'rest', properties: {}, description: 'Order look-ups' } },
    })
    expect(response.status).toBe(201)
    expect(response.body.result).toMatchObject({
      name: 'rest',
      active: false,
      description: 'Order look-ups',
      properties: { endpointPrefix: '', password: '', token: '', username: '' },
    })
  })

  it('ignores unknown and read-only fields of the body instead of storing them', async () => {
    const tenant = await createTenantAsAdmin(t)
    const response = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token,
      body: {
        type: 'rest',
        name: 'Orders',
        properties: {},
        id: randomUUID(),
        created: '2000-01-01T00:00:00Z',
        color: 'blue',
      },
    })
    expect(response.status).toBe(201)
    expect(response.body.result.created).not.toBe('2000-01-01T00:00:00Z')
    expect(response.body.result).not.toHaveProperty('color')
  })
})

describe('a chosen integration id', () => {
  it('answers 200 and the stored record to an identical repeat, 409 to different attributes', async () => {
    const tenant = await createTenantAsAdmin(t)
    const id = randomUUID()
    const url = `/v1/tenants/${tenant.id}/integrations/${id}`
    const attributes = {
      type: 'salesforce',
      name: 'CRM',
      active: 'false',
      properties: samples().salesforce.sent,
    }
    const first = await t.request('POST', url, { token, body: { attributes } })
    expect(first.status).toBe(201)

    t.clock.advance(60_000)
    const repeat = await t.request('POST', url, { token, body: { attributes } })
    expect(repeat.status).toBe(200)
    expect(repeat.body).toEqual(first.body)
    expect(repeat.headers.location).toBeUndefined()

    // The same attributes spelt differently are still the same.
    const respelt = await t.request('POST', url, {
      token,
      body: {
        attributes: {
          ...attributes,
          active: false,
          properties: { ...attributes.properties, pushEnabled: false },
        },
      },
    })
    expect(respelt.status).toBe(200)

    for (const different of [
      { ...attributes, properties: { ...attributes.properties, password: secret('other-password') } },
      { ...attributes, name: 'CRM 2' },
      { ...attributes, active: 'true' },
      { ...attributes, description: 'now described' },
    ]) {
      const conflict = await t.request('POST', url, { token, body: { attributes: different } })
      expect(conflict.status).toBe(409)
      expect(conflict.body.error.reason).toBe('integration_exists')
      expect(conflict.body.error.message).toContain('already exists')
    }
    const stored = await t.request('GET', url, { token })
    expect(stored.body.result).toEqual(first.body)
  })

  it('lets two tenants use the same id, and keeps names unique per tenant, ignoring case and spacing', async () => {
    const [a, b] = [await createTenantAsAdmin(t), await createTenantAsAdmin(t)]
    const id = randomUUID()
    const body = { attributes: { type: 'rest', name: 'Order Service', properties: {} } }
    expect((await t.request('POST', `/v1/tenants/${a.id}/integrations/${id}`, { token, body })).status).toBe(
      201,
    )
    expect((await t.request('POST', `/v1/tenants/${b.id}/integrations/${id}`, { token, body })).status).toBe(
      201,
    )

    const clash = await t.request('POST', `/v1/tenants/${a.id}/integrations`, {
      token,
      body: { type: 'rest', name: '  order   SERVICE ', properties: {} },
    })
    expect(clash.status).toBe(409)
    expect(clash.body.error).toMatchObject({
      reason: 'integration_name_taken',
      attribute: { name: 'already exists' },
    })
    expect(clash.body.error.message).toContain('already exists')

    const other = await t.request('POST', `/v1/tenants/${a.id}/integrations`, {
      token,
      body: { type: 'rest', name: 'Billing', properties: {} },
    })
    const rename = await t.request('PUT', `/v1/tenants/${a.id}/integrations/${other.body.result.id}`, {
      token,
      body: { name: 'ORDER SERVICE' },
    })
    expect(rename.status).toBe(409)
    expect(rename.body.error.reason).toBe('integration_name_taken')
  })
})

describe('reading', () => {
  it('pages the list with a cursor, in creation order', async () => {
    const tenant = await createTenantAsAdmin(t)
    const ids: string[] = []
    for (const name of ['One', 'Two', 'Three']) {
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
        token,
        body: { type: 'rest', name, properties: {} },
      })
      ids.push(created.body.result.id)
    }
    const first = await t.request('GET', `/v1/tenants/${tenant.id}/integrations?limit=2`, { token })
    expect(first.body.result.map((i: any) => i.id)).toEqual(ids.slice(0, 2))
    expect(first.body.nextCursor).toEqual(expect.any(String))
    const rest = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/integrations?limit=2&cursor=${first.body.nextCursor}`,
      { token },
    )
    expect(rest.body.result.map((i: any) => i.id)).toEqual(ids.slice(2))
    expect(rest.body.nextCursor).toBeUndefined()
  })

  it('answers 404 for an integration that does not exist in the tenant', async () => {
    const tenant = await createTenantAsAdmin(t)
    const missing = await t.request('GET', `/v1/tenants/${tenant.id}/integrations/${randomUUID()}`, { token })
    expect(missing.status).toBe(404)
    expect(missing.body.error.reason).toBe('integration_not_found')
    const update = await t.request('PUT', `/v1/tenants/${tenant.id}/integrations/${randomUUID()}`, {
      token,
      body: { active: true },
    })
    expect(update.status).toBe(404)
  })

  it('updates name, description and active partially, moving updated but not created', async () => {
    const tenant = await createTenantAsAdmin(t)
    const created = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token,
      body: { type: 'rest', name: 'Orders', description: 'first', properties: {} },
    })
    const id = created.body.result.id
    t.clock.advance(5_000)
    const updated = await t.request('PUT', `/v1/tenants/${tenant.id}/integrations/${id}`, {
      token,
      body: { active: 'true', description: null, type: 'salesforce' },
    })
    expect(updated.status).toBe(200)
    expect(updated.body.result).toMatchObject({
      name: 'Orders',
      active: true,
      description: null,
      type: 'rest',
    })
    expect(updated.body.result.created).toBe(created.body.result.created)
    expect(Date.parse(updated.body.result.updated)).toBe(Date.parse(created.body.result.created) + 5_000)
  })
})

describe('permissions', () => {
  it('lets a Supervisor (VIEW_ALL_PROVIDERS) read but not create or update: 403', async () => {
    const tenant = await createTenantAsAdmin(t)
    const created = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token,
      body: { type: 'rest', name: 'Orders', properties: { token: secret('rest-token') } },
    })
    const id = created.body.result.id
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)

    const list = await t.request('GET', `/v1/tenants/${tenant.id}/integrations`, { token: supervisor.token })
    expect(list.status).toBe(200)
    expect(list.body.result).toEqual([created.body.result])
    const one = await t.request('GET', `/v1/tenants/${tenant.id}/integrations/${id}`, {
      token: supervisor.token,
    })
    expect(one.status).toBe(200)
    expect(one.body.result.properties.token).toBe(MASK)

    const create = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token: supervisor.token,
      body: { type: 'rest', name: 'Other', properties: {} },
    })
    expect(create.status).toBe(403)
    expect(create.body.error.reason).toBe('permission_denied')
    const briefCreate = await t.request('POST', `/v1/tenants/${tenant.id}/integrations/${randomUUID()}`, {
      token: supervisor.token,
      body: { attributes: { type: 'rest', name: 'Other', properties: {} } },
    })
    expect(briefCreate.status).toBe(403)
    const update = await t.request('PUT', `/v1/tenants/${tenant.id}/integrations/${id}`, {
      token: supervisor.token,
      body: { active: true },
    })
    expect(update.status).toBe(403)
    const after = await t.request('GET', `/v1/tenants/${tenant.id}/integrations`, { token })
    expect(after.body.result).toEqual([created.body.result])
  })

  it('lets a tenant Administrator create, and refuses reads to an Agent (no provider permission)', async () => {
    const tenant = await createTenantAsAdmin(t)
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const created = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token: admin.token,
      body: { type: 'rest', name: 'Orders', properties: {} },
    })
    expect(created.status).toBe(201)
    expect(created.body.result.createdBy).toBe(admin.id)

    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const read = await t.request('GET', `/v1/tenants/${tenant.id}/integrations`, { token: agent.token })
    expect(read.status).toBe(403)
  })

  it('answers 404 tenant_not_found to a caller from another tenant, and 401 without credentials', async () => {
    const tenant = await createTenantAsAdmin(t)
    const created = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token,
      body: { type: 'rest', name: 'Orders', properties: {} },
    })
    const elsewhere = await createTenantAsAdmin(t)
    const stranger = await memberWithToken(t, elsewhere.id, ROLE_IDS.administrator)
    const base = `/v1/tenants/${tenant.id}/integrations`
    for (const [method, url, body] of [
      ['GET', base, undefined],
      ['GET', `${base}/${created.body.result.id}`, undefined],
      ['POST', base, { type: 'rest', name: 'Mine', properties: {} }],
      ['POST', `${base}/${randomUUID()}`, { attributes: { type: 'rest', name: 'Mine', properties: {} } }],
      ['PUT', `${base}/${created.body.result.id}`, { active: true }],
    ] as const) {
      const response = await t.request(method, url, { token: stranger.token, ...(body ? { body } : {}) })
      expect(response.status, `${method} ${url}`).toBe(404)
      expect(response.body.error.reason).toBe('tenant_not_found')
    }
    expect((await t.request('GET', base)).status).toBe(401)
    const list = await t.request('GET', base, { token })
    expect(list.body.result).toHaveLength(1)
  })
})

describe('the OpenAPI document', () => {
  it('describes the integration routes, the property keys of each type and the secret mask', async () => {
    const doc = await t.request('GET', '/openapi.json')
    expect(doc.status).toBe(200)
    const paths = doc.body.paths
    expect(Object.keys(paths['/v1/tenants/{tenantId}/integrations/{integrationId}']).sort()).toEqual([
      'delete',
      'get',
      'post',
      'put',
    ])
    expect(Object.keys(paths['/v1/tenants/{tenantId}/integrations']).sort()).toEqual(['get', 'post'])
    const text = JSON.stringify(paths['/v1/tenants/{tenantId}/integrations'].post)
    expect(text).toContain('zendesk: endpointPrefix (https URL, required to be active)')
    expect(text).toContain('consumerSecret (secret)')
  })
})

describe('the log', () => {
  it('never holds a secret sent in this file', () => {
    const log = t.logs.join('')
    expect(log).toContain('/integrations')
    for (const value of SECRETS) expect(log).not.toContain(value)
  })
})
