import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { decryptSecret, isSecretEnvelope, SecretDecryptionError } from '../../../src/crypto/secrets.js'
import { secretAssociatedData } from '../../../src/modules/integrations/integration-secrets.js'
import { createTenantAsAdmin } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Integration credentials at rest (docs/api.md#integrations): encrypted in the row, bound to their tenant, integration
 * and field, write-only through the API, and never in the log.
 */
const MASK = '********'
const SECRETS: string[] = []
function secret(label: string): string {
  const value = `${label}-${randomUUID()}`
  SECRETS.push(value)
  return value
}

const t = useTestApp()
let token: string

beforeAll(async () => {
  token = await t.adminToken()
})

async function storedProperties(tenantId: string, id: string): Promise<Record<string, any>> {
  const row = await t.database.handle.db
    .selectFrom('integrations')
    .select('properties')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  return row.properties
}

/** What the service would decrypt: the stored envelope under the row's own associated data. */
async function decryptStored(tenantId: string, id: string, field: string): Promise<string> {
  const envelope = (await storedProperties(tenantId, id))[field]
  expect(isSecretEnvelope(envelope)).toBe(true)
  return decryptSecret(t.ctx.keys, envelope, secretAssociatedData(tenantId, id, field))
}

async function createSalesforce(tenantId: string, id = randomUUID()) {
  const properties = {
    consumerKey: 'consumer-key',
    consumerSecret: secret('consumer-secret'),
    password: secret('password'),
    securityToken: secret('security-token'),
    username: 'crm@example.test',
    loginUrl: '',
  }
  const response = await t.request('POST', `/v1/tenants/${tenantId}/integrations/${id}`, {
    token,
    body: { attributes: { type: 'salesforce', name: `CRM ${id}`, active: 'true', properties } },
  })
  expect(response.status).toBe(201)
  return { id, properties, record: response.body }
}

describe('secrets at rest', () => {
  it('stores no plaintext in the row: each secret is an envelope under the current key that decrypts', async () => {
    const tenant = await createTenantAsAdmin(t)
    const { id, properties } = await createSalesforce(tenant.id)
    const raw = await sql<{ text: string }>`select properties::text as text from integrations
      where tenant_id = ${tenant.id} and id = ${id}`.execute(t.database.handle.db)
    const text = raw.rows[0]!.text
    for (const field of ['consumerSecret', 'password', 'securityToken'] as const) {
      expect(text).not.toContain(properties[field])
      expect(await decryptStored(tenant.id, id, field)).toBe(properties[field])
    }
    const stored = await storedProperties(tenant.id, id)
    expect(stored.consumerSecret.kid).toBe(t.ctx.keys.secretKeyId)
    // A fresh nonce per value: no two envelopes share one.
    const nonces = ['consumerSecret', 'password', 'securityToken'].map((field) => stored[field].iv)
    expect(new Set(nonces).size).toBe(3)
    // Non-secret values stay plain; an empty value needs no encryption.
    expect(stored).toMatchObject({ consumerKey: 'consumer-key', username: 'crm@example.test', loginUrl: '' })
  })

  it('stores an empty secret as "" and reads it back as "", a set one as the mask', async () => {
    const tenant = await createTenantAsAdmin(t)
    const response = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token,
      body: { type: 'rest', name: 'Orders', properties: { password: '', token: secret('token') } },
    })
    expect(response.body.result.properties).toMatchObject({ password: '', token: MASK })
    const stored = await storedProperties(tenant.id, response.body.result.id)
    expect(stored.password).toBe('')
    expect(isSecretEnvelope(stored.token)).toBe(true)
  })

  it('does not decrypt a ciphertext moved to another integration, another tenant or another field', async () => {
    const [a, b] = [await createTenantAsAdmin(t), await createTenantAsAdmin(t)]
    const sharedId = randomUUID()
    const source = await createSalesforce(a.id, sharedId)
    const otherTenant = await createSalesforce(b.id, sharedId) // same integration id, another tenant
    const otherIntegration = await createSalesforce(a.id)
    const db = t.database.handle.db

    const move = async (toTenant: string, toId: string, toField: string) =>
      sql`update integrations set properties = jsonb_set(properties, ${sql.val(`{${toField}}`)}::text[],
            (select properties->'password' from integrations where tenant_id = ${a.id} and id = ${sharedId}))
          where tenant_id = ${toTenant} and id = ${toId}`.execute(db)
    await move(b.id, sharedId, 'password')
    await move(a.id, otherIntegration.id, 'password')
    await move(a.id, sharedId, 'consumerSecret')

    for (const [tenantId, id, field] of [
      [b.id, sharedId, 'password'],
      [a.id, otherIntegration.id, 'password'],
      [a.id, sharedId, 'consumerSecret'],
    ] as const) {
      await expect(decryptStored(tenantId, id, field)).rejects.toBeInstanceOf(SecretDecryptionError)
    }
    // The source still decrypts where it belongs.
    expect(await decryptStored(a.id, sharedId, 'password')).toBe(source.properties.password)

    // Through the API: the moved value is not the plaintext that was sent there, so an identical repeat
    // of the other tenant's create no longer matches what is stored.
    const repeat = await t.request('POST', `/v1/tenants/${b.id}/integrations/${sharedId}`, {
      token,
      body: {
        attributes: {
          type: 'salesforce',
          name: `CRM ${sharedId}`,
          active: 'true',
          properties: otherTenant.properties,
        },
      },
    })
    expect(repeat.status).toBe(409)
    expect(t.logs.join('')).toContain('a stored integration secret does not decrypt')
  })
})

describe('the masking round trip', () => {
  it('reads the mask, keeps the secret when the mask is sent back, replaces it with a new value', async () => {
    const tenant = await createTenantAsAdmin(t)
    const { id, properties } = await createSalesforce(tenant.id)
    const url = `/v1/tenants/${tenant.id}/integrations/${id}`
    const read = await t.request('GET', url, { token })
    expect(read.body.result.properties).toMatchObject({
      consumerSecret: MASK,
      password: MASK,
      securityToken: MASK,
    })
    const before = await storedProperties(tenant.id, id)

    // The admin UI sends the whole object back as read, with one field edited.
    const keep = await t.request('PUT', url, {
      token,
      body: { properties: { ...read.body.result.properties, username: 'renamed@example.test' } },
    })
    expect(keep.status).toBe(200)
    expect(keep.body.result.properties).toMatchObject({ username: 'renamed@example.test', password: MASK })
    expect(await decryptStored(tenant.id, id, 'password')).toBe(properties.password)
    expect(await decryptStored(tenant.id, id, 'consumerSecret')).toBe(properties.consumerSecret)
    expect((await storedProperties(tenant.id, id)).password).toEqual(before.password)

    const newPassword = secret('new-password')
    const replace = await t.request('PUT', url, { token, body: { properties: { password: newPassword } } })
    expect(replace.status).toBe(200)
    expect(replace.body.result.properties.password).toBe(MASK)
    expect(await decryptStored(tenant.id, id, 'password')).toBe(newPassword)
    // Keys not sent are kept.
    expect(await decryptStored(tenant.id, id, 'securityToken')).toBe(properties.securityToken)
    expect(replace.body.result.properties.username).toBe('renamed@example.test')

    const clear = await t.request('PUT', url, { token, body: { properties: { securityToken: '' } } })
    expect(clear.body.result.properties.securityToken).toBe('')
    expect((await storedProperties(tenant.id, id)).securityToken).toBe('')

    // The brief's wrapper works on update too.
    const wrapped = await t.request('PUT', url, {
      token,
      body: { attributes: { properties: { password: MASK } } },
    })
    expect(wrapped.status).toBe(200)
    expect(await decryptStored(tenant.id, id, 'password')).toBe(newPassword)
  })

  it('refuses the mask as a new secret on create: 400, nothing stored', async () => {
    const tenant = await createTenantAsAdmin(t)
    const response = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token,
      body: { type: 'rest', name: 'Orders', properties: { token: MASK } },
    })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty(['properties.token'])
    const list = await t.request('GET', `/v1/tenants/${tenant.id}/integrations`, { token })
    expect(list.body.result).toEqual([])
  })
})

describe('the log', () => {
  it('never holds a secret sent in this file', () => {
    const log = t.logs.join('')
    expect(log).toContain('/integrations')
    for (const value of SECRETS) expect(log).not.toContain(value)
  })
})
