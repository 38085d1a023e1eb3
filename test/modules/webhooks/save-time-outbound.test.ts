import type { LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OutboundLookup } from '../../../src/http/outbound.js'
import { createTenantAsAdmin } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * The outbound rule (docs/webhooks.md#the-outbound-rule) judged when an address is SAVED (issue 29 item 4), on a server without
 * the allow flags: webhook URLs, SAML metadata URLs and OIDC issuers whose host is — or resolves to — a
 * loopback, private, link-local or metadata address are a 400 naming the field, before anything is stored
 * or fetched. Names resolve through the resolver handed to the app (ServiceContext.outboundLookup).
 */
const NAMES: Record<string, string> = {
  'loopback.names.test': '127.0.0.1',
  'private.names.test': '10.20.30.40',
  'metadata.names.test': '169.254.169.254',
  'public.names.test': '93.184.216.34',
}
const lookup: OutboundLookup = (hostname, _options, callback) => {
  const address = NAMES[hostname]
  if (!address) {
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), [])
    return
  }
  const all: LookupAddress[] = [{ address, family: isIP(address) }]
  callback(null, all)
}

let t: TestApp
let token: string
let tenantId: string

beforeAll(async () => {
  t = await createTestApp()
  t.ctx.outboundLookup = lookup
  token = await t.adminToken()
  tenantId = (await createTenantAsAdmin(t)).id
})
afterAll(async () => {
  await t.close()
})

const webhook = (url: string) =>
  t.request('POST', `/v1/tenants/${tenantId}/webhooks`, { token, body: { url, events: ['tenant.*'] } })

describe('webhook URLs', () => {
  it('refuses loopback, private and metadata hosts — named or resolved — with 400 on url', async () => {
    for (const url of [
      'https://localhost:8443/hook',
      'https://hooks.localhost/hook',
      'https://loopback.names.test/hook',
      'https://private.names.test/hook',
      'https://metadata.names.test/latest',
      'https://127.0.0.1/hook',
    ]) {
      const refused = await webhook(url)
      expect(refused.status, url).toBe(400)
      expect(refused.body.error.reason).toBe('validation_failed')
      expect(Object.keys(refused.body.error.attribute), url).toEqual(['url'])
      expect(refused.body.error.attribute.url, url).toContain('not allowed')
    }
    const listed = await t.request('GET', `/v1/tenants/${tenantId}/webhooks`, { token })
    expect(listed.body.result).toEqual([])
  })

  it('stores a public name, and refuses changing it to one that resolves to loopback', async () => {
    const created = await webhook('https://public.names.test/hook')
    expect(created.status).toBe(201)
    const url = `/v1/tenants/${tenantId}/webhooks/${created.body.result.id}`
    const moved = await t.request('PUT', url, { token, body: { url: 'https://loopback.names.test/hook' } })
    expect(moved.status).toBe(400)
    expect(moved.body.error.attribute.url).toContain('127.0.0.1')
    expect((await t.request('GET', url, { token })).body.result.url).toBe('https://public.names.test/hook')
  })
})

describe('identity providers', () => {
  it('refuses a SAML metadata URL on a private address before fetching it, naming metadata-url', async () => {
    for (const metadataUrl of ['https://10.1.2.3/metadata', 'https://private.names.test/metadata']) {
      const refused = await t.request('POST', `/v1/tenants/${tenantId}/identity-providers`, {
        token,
        body: { name: 'Corporate SAML', identityProvider: 'saml', metadataUrl },
      })
      expect(refused.status, metadataUrl).toBe(400)
      expect(refused.body.error.attribute['metadata-url'], metadataUrl).toContain('not allowed')
    }
  })

  it('refuses an OIDC issuer on a loopback name, naming issuer', async () => {
    for (const issuer of ['https://localhost/realms/acme', 'https://loopback.names.test/']) {
      const refused = await t.request('POST', `/v1/tenants/${tenantId}/identity-providers`, {
        token,
        body: { name: 'Corporate OIDC', identityProvider: 'oidc', issuer, clientId: 'c', clientSecret: 's' },
      })
      expect(refused.status, issuer).toBe(400)
      expect(refused.body.error.attribute.issuer, issuer).toContain('not allowed')
    }
  })
})
