import { describe, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { uniqueName } from '../../helpers/fixtures.js'
import { createTestIdp } from '../../helpers/saml-idp.js'
import { expectRouteSecured, type SecuredRoute } from '../../helpers/security-checks.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Identity providers (docs/sso.md): every route withstands the attacks of helpers/security-checks.ts. */
const t = useTestApp()
const idp = createTestIdp()

const body = () => ({ name: uniqueName('IdP'), identityProvider: 'saml', metadataFile: idp.metadata })
const provider: SecuredRoute['setUp'] = async (t, tenantId, token) => {
  const created = await t.request('POST', `/v1/tenants/${tenantId}/identity-providers`, {
    token,
    body: body(),
  })
  if (created.status !== 201) throw new Error(`provider create failed: ${JSON.stringify(created.body)}`)
  return created.body.result.id
}
const one = (tenantId: string, id: string) => `/v1/tenants/${tenantId}/identity-providers/${id}`

describe('every identity provider route withstands the attacks', () => {
  it('POST /v1/tenants/{tenantId}/identity-providers', async () => {
    await expectRouteSecured(t, {
      method: 'POST',
      path: (tenantId) => `/v1/tenants/${tenantId}/identity-providers`,
      body,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('GET /v1/tenants/{tenantId}/identity-providers', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: (tenantId) => `/v1/tenants/${tenantId}/identity-providers`,
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })

  it('GET /v1/tenants/{tenantId}/identity-providers/{id}', async () => {
    await expectRouteSecured(t, {
      method: 'GET',
      path: one,
      setUp: provider,
      roleWithoutPermission: ROLE_IDS.agent,
    })
  })

  it('PUT /v1/tenants/{tenantId}/identity-providers/{id}', async () => {
    await expectRouteSecured(t, {
      method: 'PUT',
      path: one,
      setUp: provider,
      body: () => ({ name: uniqueName('Renamed') }),
      roleWithoutPermission: ROLE_IDS.supervisor,
    })
  })
})
