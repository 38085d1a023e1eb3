import { describe, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { uniqueName } from '../../helpers/fixtures.js'
import { expectRouteSecured, type SecuredRoute } from '../../helpers/security-checks.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Integrations (docs/api.md#integrations): every route withstands the attacks of helpers/security-checks.ts. */
const t = useTestApp()

const body = () => ({
  type: 'rest',
  name: uniqueName('CRM'),
  properties: { endpointPrefix: 'https://crm.example.com' },
})
const integration: SecuredRoute['setUp'] = async (t, tenantId, token) => {
  const created = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, { token, body: body() })
  if (created.status !== 201) throw new Error(`integration create failed: ${JSON.stringify(created.body)}`)
  return created.body.result.id
}
const one = (tenantId: string, id: string) => `/v1/tenants/${tenantId}/integrations/${id}`

describe('every integration route withstands the attacks', () => {
  it('POST /v1/tenants/{tenantId}/integrations', async () => {
    await expectRouteSecured(t, {
      method: 'POST',
      path: (tenantId) => `/v1/tenants/${tenantId}/integrations`,
      body,
      // The Agent lacks MANAGE_ALL_PROVIDERS (and the Supervisor too).
      roleWithoutPermission: ROLE_IDS.agent,
    })
  })

  it('GET /v1/tenants/{tenantId}/integrations', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: (tenantId) => `/v1/tenants/${tenantId}/integrations`,
      roleWithoutPermission: ROLE_IDS.agent,
    })
  })

  it('GET /v1/tenants/{tenantId}/integrations/{integrationId}', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: one,
      setUp: integration,
      roleWithoutPermission: ROLE_IDS.agent,
    })
  })

  it('PUT /v1/tenants/{tenantId}/integrations/{integrationId}', async () => {
    await expectRouteSecured(t, {
      method: 'PUT',
      path: one,
      setUp: integration,
      body: () => ({ name: uniqueName('Renamed') }),
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('DELETE /v1/tenants/{tenantId}/integrations/{integrationId}', async () => {
    await expectRouteSecured(t, {
      method: 'DELETE',
      path: one,
      setUp: integration,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })
})
