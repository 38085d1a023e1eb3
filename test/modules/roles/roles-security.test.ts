import { describe, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { uniqueName } from '../../helpers/fixtures.js'
import { expectRouteSecured, type SecuredRoute } from '../../helpers/security-checks.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Tenant roles (docs/api.md#tenant-roles): every route withstands the attacks of helpers/security-checks.ts. The ceiling
 * on a role's own permissions is role-ceiling.test.ts's subject.
 */
const t = useTestApp()

const body = () => ({ name: uniqueName('Role'), permissions: ['VIEW_ALL_USERS'] })
const role: SecuredRoute['setUp'] = async (t, tenantId, token) => {
  const created = await t.request('POST', `/v1/tenants/${tenantId}/roles`, { token, body: body() })
  if (created.status !== 201) throw new Error(`role create failed: ${JSON.stringify(created.body)}`)
  return created.body.result.id
}
const one = (tenantId: string, id: string) => `/v1/tenants/${tenantId}/roles/${id}`

describe('every tenant role route withstands the attacks', () => {
  it('POST /v1/tenants/{tenantId}/roles', async () => {
    await expectRouteSecured(t, {
      method: 'POST',
      path: (tenantId) => `/v1/tenants/${tenantId}/roles`,
      body,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('GET /v1/tenants/{tenantId}/roles', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: (tenantId) => `/v1/tenants/${tenantId}/roles`,
      roleWithoutPermission: ROLE_IDS.agent,
    })
  })

  it('GET /v1/tenants/{tenantId}/roles/{roleId}', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: one,
      setUp: role,
      roleWithoutPermission: ROLE_IDS.agent,
    })
  })

  it('PUT /v1/tenants/{tenantId}/roles/{roleId}', async () => {
    await expectRouteSecured(t, {
      method: 'PUT',
      path: one,
      setUp: role,
      body: () => ({ description: 'Changed by an attacker' }),
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })
})
