import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, memberWithToken } from '../../helpers/fixtures.js'
import { createTestIdp } from '../../helpers/saml-idp.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Identity provider records (docs/sso.md): CRUD, permissions, the write-only secret, and the outbound rule. */
let server: Server
let metadataUrl: string
const idp = createTestIdp()

const strict = useTestApp()
const relaxed = useTestApp({
  env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
})
beforeAll(async () => {
  server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/xml' }).end(idp.metadata),
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  metadataUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`
})
afterAll(async () => {
  server.close()
})

describe('SAML providers', () => {
  it('fetches and validates metadata by URL, audits the creation, and lists it for readers only', async () => {
    const t = relaxed
    const tenant = await createTenantAsAdmin(t)
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
      token: admin.token,
      body: { name: 'Okta', identityProvider: 'saml', metadataUrl },
    })
    expect(created.status).toBe(201)
    expect(created.body.result).toMatchObject({
      tenantId: tenant.id,
      name: 'Okta',
      active: true,
      identityProvider: 'saml',
      emailMapping: 'NameID',
      metadataUrl,
      clientSecret: '',
    })
    expect(created.body.result.serviceProvider.acsUrl).toBe(
      `http://tenantry.test/v1/sso/${created.body.result.id}/acs`,
    )
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const denied = await t.request('GET', `/v1/tenants/${tenant.id}/identity-providers`, {
      token: agent.token,
    })
    expect(denied.status).toBe(403)
    const listed = await t.request('GET', `/v1/tenants/${tenant.id}/identity-providers`, {
      token: admin.token,
    })
    expect(listed.body.result.map((p: { id: string }) => p.id)).toEqual([created.body.result.id])
    const other = await createTenantAsAdmin(t)
    const otherAdmin = await memberWithToken(t, other.id, ROLE_IDS.administrator)
    const hidden = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/identity-providers/${created.body.result.id}`,
      {
        token: otherAdmin.token,
      },
    )
    expect(hidden.status).toBe(404)
    const events = await t.database.handle.db
      .selectFrom('audit_events')
      .select('action')
      .where('target_id', '=', created.body.result.id)
      .execute()
    expect(events.map((e) => e.action)).toEqual(['identity_provider.created'])

    // The default identity provider must name an active provider of the tenant.
    const bad = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: admin.token,
      body: { defaultIdentityProvider: other.id },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('defaultIdentityProvider')
    const good = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: admin.token,
      body: { defaultIdentityProvider: created.body.result.id },
    })
    expect(good.status).toBe(200)
    const me = await t.request('GET', '/v1/me', { token: admin.token })
    expect(me.body.result[0].identityProviders).toEqual([{ id: created.body.result.id, name: 'Okta' }])
  })

  it('answers 400 on attribute.metadataFile for unusable metadata', async () => {
    const t = strict
    const tenant = await createTenantAsAdmin(t)
    for (const metadataFile of [
      'not xml',
      '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>',
    ]) {
      const response = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
        token: await t.adminToken(),
        body: { name: 'Broken', identityProvider: 'saml', metadataFile },
      })
      expect(response.status).toBe(400)
      expect(response.body.error.attribute).toHaveProperty('metadataFile')
    }
  })
})

describe('the outbound rule (SSRF)', () => {
  it('refuses a metadata URL on loopback or a private address, and plain http', async () => {
    const t = strict
    const tenant = await createTenantAsAdmin(t)
    for (const url of [
      metadataUrl,
      'https://127.0.0.1/metadata',
      'https://10.1.2.3/metadata',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/metadata',
      'https://localhost/metadata',
    ]) {
      const response = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
        token: await t.adminToken(),
        body: { name: 'SSRF', identityProvider: 'saml', metadataUrl: url },
      })
      expect([url, response.status]).toEqual([url, 400])
      expect(response.body.error.attribute).toHaveProperty('metadata-url')
    }
  })

  it('refuses an OIDC issuer on loopback or a private address', async () => {
    const t = strict
    const tenant = await createTenantAsAdmin(t)
    for (const issuer of ['https://127.0.0.1:9', 'https://192.168.0.1', 'https://169.254.169.254']) {
      const response = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
        token: await t.adminToken(),
        body: { name: 'SSRF', identityProvider: 'oidc', issuer, clientId: 'c', clientSecret: 's' },
      })
      expect([issuer, response.status]).toEqual([issuer, 400])
      expect(response.body.error.attribute).toHaveProperty('issuer')
    }
  })
})
