import { ROLE_IDS } from '../../src/access/permissions.js'
import { createTenantAsAdmin, uniqueName } from './fixtures.js'
import type { ApiResponse, TestApp } from './test-app.js'

/** A fresh tenant and a SCIM key of it (docs/scim.md), and a client that speaks SCIM to its endpoint. */
export interface ScimTenant {
  tenantId: string
  keyId: string
  token: string
  base: string
  scim<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse<T>>
}

export async function createScimKey(
  t: TestApp,
  tenantId: string,
  body: Record<string, unknown> = {},
  as?: string,
): Promise<ApiResponse> {
  return t.request('POST', `/v1/tenants/${tenantId}/api-keys`, {
    token: as ?? (await t.adminToken()),
    body: { name: uniqueName('SCIM'), roleId: ROLE_IDS.administrator, scope: 'scim', ...body },
  })
}

export async function scimTenant(
  t: TestApp,
  keyRoleId: string = ROLE_IDS.administrator,
): Promise<ScimTenant> {
  const tenant = await createTenantAsAdmin(t)
  const key = await createScimKey(t, tenant.id, { roleId: keyRoleId })
  if (key.status !== 201) throw new Error(`scim key create failed: ${JSON.stringify(key.body)}`)
  const base = `/scim/v2/tenants/${tenant.id}`
  const token = key.body.result.token as string
  return {
    tenantId: tenant.id,
    keyId: key.body.result.id,
    token,
    base,
    scim: (method, path, body, headers = {}) =>
      t.request(method, `${base}${path}`, {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { body } : {}),
        headers: { ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}), ...headers },
      }),
  }
}

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'

export function userBody(userName: string, more: Record<string, unknown> = {}) {
  return {
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ value: userName, type: 'work', primary: true }],
    active: true,
    ...more,
  }
}
