import { describe, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { expectRouteSecured } from '../../helpers/security-checks.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Tenants (docs/api.md#tenants): every route of one tenant withstands the attacks of helpers/security-checks.ts. */
const t = useTestApp()

describe('every route of a tenant withstands the attacks', () => {
  it('GET /v1/tenants/{tenantId}', async () => {
    // Every member may read its own tenant: no 403 case.
    await expectRouteSecured(t, { method: 'GET', path: (tenantId) => `/v1/tenants/${tenantId}` })
  })

  it('PUT /v1/tenants/{tenantId}', async () => {
    await expectRouteSecured(t, {
      method: 'PUT',
      path: (tenantId) => `/v1/tenants/${tenantId}`,
      body: () => ({ description: 'Changed by an attacker' }),
      roleWithoutPermission: ROLE_IDS.agent,
    })
  })

  it('GET /v1/tenants/{tenantId}/permissions', async () => {
    await expectRouteSecured(t, { method: 'GET', path: (tenantId) => `/v1/tenants/${tenantId}/permissions` })
  })
})
