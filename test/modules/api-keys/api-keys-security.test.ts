import { describe, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { uniqueName } from '../../helpers/fixtures.js'
import { expectRouteSecured, type SecuredRoute } from '../../helpers/security-checks.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * API keys (docs/api.md#api-keys): every route withstands the attacks of helpers/security-checks.ts. The ceiling
 * on a key's role is not among them here — no built-in role below the Administrator may manage keys at
 * all (the Supervisor lacks MANAGE_ALL_APP_CREDENTIALS); api-keys.test.ts and role-ceiling.test.ts
 * check it with custom roles.
 */
const t = useTestApp()

const apiKey: SecuredRoute['setUp'] = async (t, tenantId, token) => {
  const created = await t.request('POST', `/v1/tenants/${tenantId}/api-keys`, {
    token,
    body: { name: uniqueName('Key'), roleId: ROLE_IDS.agent },
  })
  if (created.status !== 201) throw new Error(`key create failed: ${JSON.stringify(created.body)}`)
  return created.body.result.id
}
const one = (tenantId: string, id: string) => `/v1/tenants/${tenantId}/api-keys/${id}`

describe('every API key route withstands the attacks', () => {
  it('POST /v1/tenants/{tenantId}/api-keys', async () => {
    await expectRouteSecured(t, {
      method: 'POST',
      path: (tenantId) => `/v1/tenants/${tenantId}/api-keys`,
      body: () => ({ name: uniqueName('Key'), roleId: ROLE_IDS.agent }),
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('GET /v1/tenants/{tenantId}/api-keys', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: (tenantId) => `/v1/tenants/${tenantId}/api-keys`,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('GET /v1/tenants/{tenantId}/api-keys/{keyId}', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: one,
      setUp: apiKey,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('PUT /v1/tenants/{tenantId}/api-keys/{keyId}', async () => {
    await expectRouteSecured(t, {
      method: 'PUT',
      path: one,
      setUp: apiKey,
      body: () => ({ status: 'disabled' }),
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })
})
