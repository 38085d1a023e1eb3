import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { createTenantAsAdmin } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Every rule of the type table of docs/api.md#integrations: a 400 naming the field in `attribute`, and nothing stored. Each case
 * is sent in both spellings (the brief's `attributes` wrapper and the flat body) where they differ.
 */
const t = useTestApp()
let token: string
let tenantId: string

beforeAll(async () => {
  token = await t.adminToken()
  tenantId = (await createTenantAsAdmin(t)).id
})

async function storedCount(): Promise<number> {
  const list = await t.request('GET', `/v1/tenants/${tenantId}/integrations`, { token })
  return list.body.result.length
}

const zendesk = {
  endpointPrefix: 'https://acme.example.test/api/v2/',
  interactionFieldId: '360001',
  username: 'agent@example.test',
  workItems: true,
}

/** [what, attributes, the attribute the 400 must name (without the `attributes.` prefix)] */
const INVALID: Array<[string, Record<string, unknown>, string]> = [
  ['an unknown type', { type: 'hubspot', properties: {} }, 'type'],
  ['no type', { properties: {} }, 'type'],
  ['no properties', { type: 'rest' }, 'properties'],
  ['properties that are not an object', { type: 'rest', properties: 'token=1' }, 'properties'],
  ['an unknown property key', { type: 'rest', properties: { foo: 'bar' } }, 'properties.foo'],
  [
    'a key named like an object member',
    { type: 'rest', properties: { constructor: 'x' } },
    'properties.constructor',
  ],
  ['a key of another type', { type: 'salesforce', properties: { token: 'x' } }, 'properties.token'],
  ['a number where a string belongs', { type: 'rest', properties: { username: 5 } }, 'properties.username'],
  [
    'a control character in a property',
    { type: 'rest', properties: { username: 'a\u0000b' } },
    'properties.username',
  ],
  [
    'a property over 2048 characters',
    { type: 'rest', properties: { token: 'x'.repeat(2049) } },
    'properties.token',
  ],
  ['active that is not a boolean', { type: 'rest', active: 'yes', properties: {} }, 'active'],
  ['an empty name', { type: 'rest', name: '   ', properties: {} }, 'name'],
  ['a name over 255 characters', { type: 'rest', name: 'n'.repeat(256), properties: {} }, 'name'],
  [
    'a description over 1000 characters',
    { type: 'rest', description: 'd'.repeat(1001), properties: {} },
    'description',
  ],
  [
    'salesforce loginUrl over http',
    { type: 'salesforce', properties: { loginUrl: 'http://login.example.test' } },
    'properties.loginUrl',
  ],
  [
    'salesforce loginUrl that is no URL',
    { type: 'salesforce', properties: { loginUrl: 'login page' } },
    'properties.loginUrl',
  ],
  [
    'salesforce pushEnabled that is not a boolean',
    { type: 'salesforce', properties: { pushEnabled: 'on' } },
    'properties.pushEnabled',
  ],
  [
    // Required properties are needed to be active (docs/api.md#integrations): the 400 names `active`.
    'an active zendesk without workItems',
    { type: 'zendesk', active: true, properties: { ...zendesk, workItems: undefined } },
    'active',
  ],
  [
    'zendesk workItems that is not a boolean',
    { type: 'zendesk', properties: { ...zendesk, workItems: 1 } },
    'properties.workItems',
  ],
  [
    'an active zendesk, workItems true without interactionFieldId',
    { type: 'zendesk', active: true, properties: { ...zendesk, interactionFieldId: '' } },
    'active',
  ],
  [
    'an active zendesk without endpointPrefix',
    { type: 'zendesk', active: 'true', properties: { ...zendesk, endpointPrefix: undefined } },
    'active',
  ],
  [
    'zendesk endpointPrefix over http',
    { type: 'zendesk', properties: { ...zendesk, endpointPrefix: 'http://acme.example.test' } },
    'properties.endpointPrefix',
  ],
  [
    'rest endpointPrefix over ftp',
    { type: 'rest', properties: { endpointPrefix: 'ftp://files.example.test' } },
    'properties.endpointPrefix',
  ],
  [
    'rest endpointPrefix with spaces around',
    { type: 'rest', properties: { endpointPrefix: ' https://x.example.test ' } },
    'properties.endpointPrefix',
  ],
]

describe('creating with invalid attributes', () => {
  for (const [what, attributes, field] of INVALID) {
    it(`refuses ${what}: 400 naming ${field}, nothing stored`, async () => {
      const body = JSON.parse(JSON.stringify(attributes)) // drops the undefined keys
      const brief = await t.request('POST', `/v1/tenants/${tenantId}/integrations/${randomUUID()}`, {
        token,
        body: { attributes: body },
      })
      expect(brief.status).toBe(400)
      expect(brief.body.error.reason).toBe('validation_failed')
      // An activation refused for missing properties is `attribute.active` in either spelling (issue 29).
      const activation = what.startsWith('an active ')
      expect(Object.keys(brief.body.error.attribute)).toContain(activation ? field : `attributes.${field}`)

      const flat = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, { token, body })
      expect(flat.status).toBe(400)
      expect(Object.keys(flat.body.error.attribute)).toContain(field)
      expect(await storedCount()).toBe(0)
    })
  }

  it('lists the allowed types when the type is unknown, and the allowed keys when a key is', async () => {
    const type = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, {
      token,
      body: { type: 'hubspot', properties: {} },
    })
    for (const allowed of ['salesforce', 'zendesk', 'rest'])
      expect(type.body.error.message).toContain(allowed)
    const key = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, {
      token,
      body: { type: 'rest', properties: { foo: 1, bar: 2, token: 3 } },
    })
    expect(key.body.error.attribute).toEqual({
      'properties.foo': expect.stringContaining('endpointPrefix, password, token, username'),
      'properties.bar': expect.stringContaining('is not a property'),
      'properties.token': 'must be a string',
    })
  })

  it('refuses a body that is not an object, and an empty one', async () => {
    const array = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, { token, body: [] })
    expect(array.status).toBe(400)
    const empty = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, { token, body: {} })
    expect(empty.status).toBe(400)
    expect(Object.keys(empty.body.error.attribute).sort()).toEqual(['properties', 'type'])
    expect(await storedCount()).toBe(0)
  })
})

describe('what is valid', () => {
  it('takes the edges of each rule: "" URLs where allowed, workItems false without a field id, string flags', async () => {
    const valid: Array<Record<string, unknown>> = [
      { type: 'salesforce', name: 'a', properties: { loginUrl: '', pushEnabled: 'true' } },
      {
        type: 'zendesk',
        name: 'b',
        properties: { ...zendesk, interactionFieldId: undefined, workItems: 'false' },
      },
      { type: 'rest', name: 'c', active: 'false', properties: { endpointPrefix: 'http://crm.example.test' } },
      { type: 'rest', name: 'd', active: true, properties: { endpointPrefix: '' } },
    ]
    const results = []
    for (const body of valid) {
      const response = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, {
        token,
        body: JSON.parse(JSON.stringify(body)),
      })
      expect(response.status, JSON.stringify(response.body)).toBe(201)
      results.push(response.body.result)
    }
    expect(results[0].properties.pushEnabled).toBe(true)
    expect(results[1].properties).toMatchObject({ workItems: false, interactionFieldId: '' })
    expect(results[2].active).toBe(false)
    expect(results[3].active).toBe(true)
  })
})

describe('updating with invalid attributes', () => {
  it('refuses each bad change with a 400 naming it and leaves the integration as it was', async () => {
    const created = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, {
      token,
      body: { type: 'zendesk', name: 'Tickets', active: true, properties: zendesk },
    })
    expect(created.status).toBe(201)
    const url = `/v1/tenants/${tenantId}/integrations/${created.body.result.id}`
    for (const [body, field] of [
      [{ properties: { foo: 'x' } }, 'properties.foo'],
      [{ properties: { endpointPrefix: 'http://acme.example.test' } }, 'properties.endpointPrefix'],
      // An active integration keeps its required properties: the 400 names `active`.
      [{ properties: { interactionFieldId: '' } }, 'active'],
      [{ properties: { workItems: 'yes' } }, 'properties.workItems'],
      [{ attributes: { properties: { interactionFieldId: '' } } }, 'active'],
      [{ active: 'maybe' }, 'active'],
      [{ name: '' }, 'name'],
    ] as const) {
      const response = await t.request('PUT', url, { token, body })
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(Object.keys(response.body.error.attribute)).toContain(field)
    }
    const after = await t.request('GET', url, { token })
    expect(after.body.result).toEqual(created.body.result)

    // Turning workItems off makes an empty field id acceptable: the rule is checked on the merge.
    const off = await t.request('PUT', url, {
      token,
      body: { properties: { workItems: false, interactionFieldId: '' } },
    })
    expect(off.status).toBe(200)
    const on = await t.request('PUT', url, { token, body: { properties: { workItems: true } } })
    expect(on.status).toBe(400)
    expect(on.body.error.attribute.active).toContain('properties.interactionFieldId')
  })
})
