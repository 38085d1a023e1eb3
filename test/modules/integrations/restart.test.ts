import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import { resolveKeys } from '../../../src/crypto/keys.js'
import { decryptSecret } from '../../../src/crypto/secrets.js'
import { createLogger } from '../../../src/logger.js'
import { secretAssociatedData } from '../../../src/modules/integrations/integration-secrets.js'
import { type RunningServer, start } from '../../../src/server.js'
import { REGION_ID } from '../../helpers/fixtures.js'

/**
 * The "done when": the real server on the embedded database with a generated key, each type
 * created over HTTP, a restart on the same folder, and the data read back and still decryptable. One
 * test on purpose: a fresh embedded database takes seconds to create.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-integrations-restart-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const ADMIN = { email: 'restart-admin@tenantry.test', password: 'restart-admin-password' }
const config = loadConfig({
  TENANTRY_DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  TENANTRY_ADMIN_EMAIL: ADMIN.email,
  TENANTRY_ADMIN_PASSWORD: ADMIN.password,
  LOG_LEVEL: 'info',
})
const logs: string[] = []
const logger = createLogger(
  'info',
  new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString())
      done()
    },
  }),
)

async function call(server: RunningServer, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return { status: response.status, body: (await response.json()) as any }
}

async function login(server: RunningServer): Promise<string> {
  const response = await call(server, 'POST', '/v1/tokens', undefined, {
    username: ADMIN.email,
    password: ADMIN.password,
  })
  expect(response.status).toBe(200)
  return response.body.token
}

const secrets = {
  consumerSecret: `sf-consumer-${randomUUID()}`,
  sfPassword: `sf-password-${randomUUID()}`,
  securityToken: `sf-token-${randomUUID()}`,
  zdPassword: `zd-password-${randomUUID()}`,
  restToken: `rest-token-${randomUUID()}`,
}
const attributes = {
  salesforce: {
    type: 'salesforce',
    name: 'salesforce',
    active: 'true',
    properties: {
      consumerKey: 'consumer-key',
      consumerSecret: secrets.consumerSecret,
      password: secrets.sfPassword,
      securityToken: secrets.securityToken,
      username: 'crm@example.test',
      loginUrl: 'https://login.example.test',
    },
  },
  zendesk: {
    type: 'zendesk',
    name: 'zendesk',
    active: 'false',
    properties: {
      endpointPrefix: 'https://acme.example.test/api/v2/',
      interactionFieldId: '360001',
      password: secrets.zdPassword,
      username: 'tickets@example.test',
      workItems: true,
    },
  },
  rest: {
    type: 'rest',
    name: 'rest',
    active: true,
    properties: { endpointPrefix: 'https://orders.example.test', token: secrets.restToken, username: 'svc' },
  },
}

describe('integrations across a restart', () => {
  it('keeps each type readable and its secrets decryptable with the key generated into the data folder', async () => {
    expect(config.databaseUrl).toBeUndefined()
    expect(config.secretKey).toBeUndefined()

    const first = await start(config, logger)
    const records: Record<string, any> = {}
    let tenantId: string
    try {
      expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600)
      const token = await login(first)
      const tenant = await call(first, 'POST', '/v1/tenants', token, {
        name: 'Restarts',
        regionId: REGION_ID,
      })
      tenantId = tenant.body.result.id
      for (const type of ['salesforce', 'zendesk'] as const) {
        const created = await call(
          first,
          'POST',
          `/v1/tenants/${tenantId}/integrations/${randomUUID()}`,
          token,
          {
            attributes: attributes[type],
          },
        )
        expect(created.status).toBe(201)
        records[type] = created.body
      }
      const rest = await call(first, 'POST', `/v1/tenants/${tenantId}/integrations`, token, attributes.rest)
      expect(rest.status).toBe(201)
      records.rest = rest.body.result
    } finally {
      await first.close()
    }

    const second = await start(config, logger)
    try {
      const token = await login(second)
      const list = await call(second, 'GET', `/v1/tenants/${tenantId}/integrations`, token)
      expect(list.status).toBe(200)
      expect(list.body.result).toHaveLength(3)
      for (const type of ['salesforce', 'zendesk', 'rest'] as const) {
        const url = `/v1/tenants/${tenantId}/integrations/${records[type].id}`
        const read = await call(second, 'GET', url, token)
        expect(read.body.result).toEqual(records[type])
        // The server decrypts what the first process stored: an identical repeat matches (200).
        const repeat = await call(second, 'POST', url, token, { attributes: attributes[type] })
        expect(repeat.status, type).toBe(200)
      }

      // "********" sent back keeps the stored secret; the envelope decrypts with the key from the folder.
      const sfUrl = `/v1/tenants/${tenantId}/integrations/${records.salesforce.id}`
      const kept = await call(second, 'PUT', sfUrl, token, {
        properties: { ...records.salesforce.properties, username: 'renamed@example.test' },
      })
      expect(kept.status).toBe(200)
      const row = await second.database.db
        .selectFrom('integrations')
        .select('properties')
        .where('id', '=', records.salesforce.id)
        .executeTakeFirstOrThrow()
      const keysFromFolder = resolveKeys(config)
      const ad = secretAssociatedData(tenantId, records.salesforce.id, 'password')
      expect(decryptSecret(keysFromFolder, (row.properties as any).password, ad)).toBe(secrets.sfPassword)
    } finally {
      await second.close()
    }

    const log = logs.join('')
    expect(log.match(/TENANTRY_SECRET_KEY is not set: generated a key/g)).toHaveLength(1)
    for (const value of Object.values(secrets)) expect(log).not.toContain(value)
  }, 180_000)
})
