import { describe, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { expectRouteSecured, type SecuredRoute } from '../../helpers/security-checks.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Webhooks (docs/webhooks.md): every route withstands the attacks of helpers/security-checks.ts. No delivery is
 * attempted (the test app runs no worker); the outbound rule is relaxed so that the saved address — a
 * loopback port nobody listens on — passes whatever is checked when it is saved.
 */
const t = useTestApp({
  env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
})

const body = () => ({ url: 'http://127.0.0.1:9/hooks', events: ['tenant.*'] })
const webhook: SecuredRoute['setUp'] = async (t, tenantId, token) => {
  const created = await t.request('POST', `/v1/tenants/${tenantId}/webhooks`, { token, body: body() })
  if (created.status !== 201) throw new Error(`webhook create failed: ${JSON.stringify(created.body)}`)
  return created.body.result.id
}
const one = (tenantId: string, id: string) => `/v1/tenants/${tenantId}/webhooks/${id}`

describe('every webhook route withstands the attacks', () => {
  it('POST /v1/tenants/{tenantId}/webhooks', async () => {
    await expectRouteSecured(t, {
      method: 'POST',
      path: (tenantId) => `/v1/tenants/${tenantId}/webhooks`,
      body,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('GET /v1/tenants/{tenantId}/webhooks', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: (tenantId) => `/v1/tenants/${tenantId}/webhooks`,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('GET /v1/tenants/{tenantId}/webhooks/{id}', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: one,
      setUp: webhook,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('PUT /v1/tenants/{tenantId}/webhooks/{id}', async () => {
    await expectRouteSecured(t, {
      method: 'PUT',
      path: one,
      setUp: webhook,
      body: () => ({ active: false }),
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('GET /v1/tenants/{tenantId}/webhooks/{id}/deliveries', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: (tenantId, id) => `${one(tenantId, id)}/deliveries`,
      setUp: webhook,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })
})
