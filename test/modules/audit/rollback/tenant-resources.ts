import { randomUUID } from 'node:crypto'
import { inflateRawSync } from 'node:zlib'
import { expect } from 'vitest'
import { ROLE_IDS } from '../../../../src/access/permissions.js'
import { insertMembership, insertUser, uniqueName } from '../../../helpers/fixtures.js'
import { as, type Rollback, type WriteAction } from './harness.js'

/** The audit-rollback scenes of tenant resources (see ../audit-rollback.test.ts). */
export function tenantResourceScenes(r: Rollback): WriteAction[] {
  const { t, api, get, newTenant, form, newIntegration, newSamlProvider } = r
  return [
    {
      name: 'POST /v1/tenants/{t}/integrations',
      action: 'integration.created',
      table: 'integrations',
      async arrange() {
        const tenantId = await newTenant()
        const name = uniqueName('CRM')
        return {
          write: () =>
            api('POST', `/v1/tenants/${tenantId}/integrations`, {
              token: r.admin,
              body: {
                type: 'rest',
                name,
                properties: { endpointPrefix: 'https://crm.example.com', password: 's3cret' },
              },
            }),
          stored: async () =>
            ((await get(`/v1/tenants/${tenantId}/integrations`)).body.result as any[]).some(
              (i) => i.name === name,
            ),
        }
      },
    },
    {
      name: 'POST /v1/tenants/{t}/integrations/{id} (a client-chosen id)',
      action: 'integration.created',
      table: 'integrations',
      async arrange() {
        const tenantId = await newTenant()
        const id = randomUUID()
        return {
          write: () =>
            api('POST', `/v1/tenants/${tenantId}/integrations/${id}`, {
              token: r.admin,
              body: { attributes: { type: 'rest', name: uniqueName('CRM'), active: false, properties: {} } },
            }),
          stored: async () => (await get(`/v1/tenants/${tenantId}/integrations/${id}`)).status === 200,
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{t}/integrations/{id}',
      action: 'integration.updated',
      table: 'integrations',
      async arrange() {
        const tenantId = await newTenant()
        const id = await newIntegration(tenantId)
        const description = uniqueName('Nightly sync')
        return {
          write: () =>
            api('PUT', `/v1/tenants/${tenantId}/integrations/${id}`, {
              token: r.admin,
              body: { description },
            }),
          stored: async () =>
            (await get(`/v1/tenants/${tenantId}/integrations/${id}`)).body.result.description === description,
        }
      },
    },
    {
      name: 'DELETE /v1/tenants/{t}/integrations/{id}',
      action: 'integration.deleted',
      table: 'integrations',
      async arrange() {
        const tenantId = await newTenant()
        const id = await newIntegration(tenantId)
        return {
          write: () => api('DELETE', `/v1/tenants/${tenantId}/integrations/${id}`, as(r.admin)),
          stored: async () => (await get(`/v1/tenants/${tenantId}/integrations/${id}`)).status === 404,
        }
      },
    },
    {
      name: 'POST /v1/tenants/{t}/api-keys',
      action: 'api_key.created',
      table: 'api_keys',
      async arrange() {
        const tenantId = await newTenant()
        const name = uniqueName('Robot')
        return {
          write: () =>
            api('POST', `/v1/tenants/${tenantId}/api-keys`, {
              token: r.admin,
              body: { name, roleId: ROLE_IDS.agent },
            }),
          stored: async () =>
            ((await get(`/v1/tenants/${tenantId}/api-keys`)).body.result as any[]).some(
              (k) => k.name === name,
            ),
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{t}/api-keys/{id}',
      action: 'api_key.updated',
      table: 'api_keys',
      async arrange() {
        const tenantId = await newTenant()
        const key = await t.request('POST', `/v1/tenants/${tenantId}/api-keys`, {
          token: r.admin,
          body: { name: uniqueName('Robot'), roleId: ROLE_IDS.agent },
        })
        expect(key.status).toBe(201)
        const id = key.body.result.id
        return {
          write: () =>
            api('PUT', `/v1/tenants/${tenantId}/api-keys/${id}`, {
              token: r.admin,
              body: { status: 'disabled' },
            }),
          stored: async () =>
            (await get(`/v1/tenants/${tenantId}/api-keys/${id}`)).body.result.status === 'disabled',
        }
      },
    },
    {
      name: 'POST /v1/tenants/{t}/roles',
      action: 'role.created',
      table: 'roles',
      async arrange() {
        const tenantId = await newTenant()
        const name = uniqueName('Reviewer')
        return {
          write: () =>
            api('POST', `/v1/tenants/${tenantId}/roles`, {
              token: r.admin,
              body: { name, permissions: ['VIEW_ALL_USERS'] },
            }),
          stored: async () =>
            ((await get(`/v1/tenants/${tenantId}/roles`)).body.result as any[]).some((r) => r.name === name),
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{t}/roles/{id}',
      action: 'role.updated',
      table: 'roles',
      async arrange() {
        const tenantId = await newTenant()
        const role = await t.request('POST', `/v1/tenants/${tenantId}/roles`, {
          token: r.admin,
          body: { name: uniqueName('Reviewer'), permissions: ['VIEW_ALL_USERS'] },
        })
        expect(role.status).toBe(201)
        const id = role.body.result.id
        const description = uniqueName('Reads users')
        return {
          write: () =>
            api('PUT', `/v1/tenants/${tenantId}/roles/${id}`, { token: r.admin, body: { description } }),
          stored: async () =>
            (await get(`/v1/tenants/${tenantId}/roles/${id}`)).body.result.description === description,
        }
      },
    },
    {
      name: 'POST /v1/tenants/{t}/webhooks',
      action: 'webhook.created',
      table: 'webhooks',
      async arrange() {
        const tenantId = await newTenant()
        const url = `https://hooks.example.com/${randomUUID()}`
        return {
          write: () =>
            api('POST', `/v1/tenants/${tenantId}/webhooks`, {
              token: r.admin,
              body: { url, events: ['role.*'] },
            }),
          stored: async () =>
            ((await get(`/v1/tenants/${tenantId}/webhooks`)).body.result as any[]).some((w) => w.url === url),
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{t}/webhooks/{id}',
      action: 'webhook.updated',
      table: 'webhooks',
      async arrange() {
        const tenantId = await newTenant()
        const hook = await t.request('POST', `/v1/tenants/${tenantId}/webhooks`, {
          token: r.admin,
          body: { url: `https://hooks.example.com/${randomUUID()}`, events: ['role.*'] },
        })
        expect(hook.status).toBe(201)
        const id = hook.body.result.id
        return {
          write: () =>
            api('PUT', `/v1/tenants/${tenantId}/webhooks/${id}`, { token: r.admin, body: { active: false } }),
          stored: async () =>
            (await get(`/v1/tenants/${tenantId}/webhooks/${id}`)).body.result.active === false,
        }
      },
    },
    {
      name: 'POST /v1/tenants/{t}/identity-providers',
      action: 'identity_provider.created',
      table: 'identity_providers',
      async arrange() {
        const tenantId = await newTenant()
        const name = uniqueName('IdP')
        return {
          write: () =>
            api('POST', `/v1/tenants/${tenantId}/identity-providers`, {
              token: r.admin,
              body: { name, identityProvider: 'saml', metadataFile: r.idp.metadata },
            }),
          stored: async () =>
            ((await get(`/v1/tenants/${tenantId}/identity-providers`)).body.result as any[]).some(
              (p) => p.name === name,
            ),
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{t}/identity-providers/{id}',
      action: 'identity_provider.updated',
      table: 'identity_providers',
      async arrange() {
        const tenantId = await newTenant()
        const id = await newSamlProvider(tenantId)
        const name = uniqueName('Renamed IdP')
        return {
          write: () =>
            api('PUT', `/v1/tenants/${tenantId}/identity-providers/${id}`, {
              token: r.admin,
              body: { name },
            }),
          stored: async () =>
            (await get(`/v1/tenants/${tenantId}/identity-providers/${id}`)).body.result.name === name,
        }
      },
    },
    {
      name: 'POST /v1/sso/{id}/acs (a SAML sign-in, its assertion used up)',
      action: 'user.sso_signed_in',
      table: 'sso_used_assertions',
      async arrange() {
        const tenantId = await newTenant()
        const providerId = await newSamlProvider(tenantId)
        const spMetadata = (await t.request('GET', `/v1/sso/${providerId}/metadata`)).body as string
        const member = await insertUser(t.ctx.db)
        await insertMembership(t.ctx.db, { tenantId, userId: member.id, roleId: ROLE_IDS.agent })
        /** One sign-in: a fresh login at the IdP, answered with this assertion id. */
        const signIn = async (assertionId: string) => {
          const login = await t.request('GET', `/v1/sso/${providerId}/login`)
          expect(login.status).toBe(302)
          const request = new URL(String(login.headers.location)).searchParams.get('SAMLRequest') ?? ''
          const inResponseTo = /ID="([^"]+)"/.exec(
            inflateRawSync(Buffer.from(request, 'base64')).toString(),
          )?.[1]
          const response = await r.idp.respond(spMetadata, member.email, {
            InResponseTo: inResponseTo ?? '',
            AssertionID: assertionId,
          })
          return api('POST', `/v1/sso/${providerId}/acs`, form({ SAMLResponse: response }))
        }
        let assertionId = ''
        return {
          write: () => {
            assertionId = `_${randomUUID()}`
            return signIn(assertionId)
          },
          // The used assertion is the change: stored, it is refused when presented again.
          stored: async () => (await signIn(assertionId)).status === 401,
        }
      },
    },
  ]
}
