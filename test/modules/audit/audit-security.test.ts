import { describe, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { expectRouteSecured } from '../../helpers/security-checks.js'
import { useTestApp } from '../../helpers/test-app.js'

/** A tenant's audit trail (docs/webhooks.md) withstands the attacks of helpers/security-checks.ts. */
const t = useTestApp()

describe('the audit trail of a tenant withstands the attacks', () => {
  it('GET /v1/tenants/{tenantId}/audit-events', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: (tenantId) => `/v1/tenants/${tenantId}/audit-events`,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })
})
