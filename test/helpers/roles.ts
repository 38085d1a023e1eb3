import { expect } from 'vitest'
import type { Permission } from '../../src/access/permissions.js'
import { uniqueName } from './fixtures.js'
import type { RequestOptions, TestApp } from './test-app.js'

/** A tenant role created through the API (as the platform administrator unless `auth` says otherwise). */
export async function createRole(
  t: TestApp,
  tenantId: string,
  body: { permissions: (Permission | string)[]; name?: string; active?: boolean; shared?: boolean },
  auth?: RequestOptions,
): Promise<{ id: string; name: string; permissions: string[]; [key: string]: unknown }> {
  const response = await t.request('POST', `/v1/tenants/${tenantId}/roles`, {
    ...(auth ?? { token: await t.adminToken() }),
    body: { name: uniqueName('Role'), ...body },
  })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body.result
}

/** Basic credentials of a new API key of the tenant with the role (created by the administrator). */
export async function apiKeyWithRole(t: TestApp, tenantId: string, roleId: string): Promise<RequestOptions> {
  const key = await t.request('POST', `/v1/tenants/${tenantId}/api-keys`, {
    token: await t.adminToken(),
    body: { name: uniqueName('Key'), roleId },
  })
  expect(key.status, JSON.stringify(key.body)).toBe(201)
  const { id, secret } = key.body.result
  return { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` }
}
