import { PERMISSIONS, REGIONS } from '../../src/access/permissions.js'
import type { Arrangement } from './scenarios.js'

export interface ApiResponse {
  status: number
  body: any
}

/** One JSON request; the arrangement goes through the public API like any client. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = {}
  if (options.token) headers.authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: options.body === undefined ? null : JSON.stringify(options.body),
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: keep the text for the message
  }
  return { status: response.status, body }
}

/** True when Fastify answered "no such route" rather than the route itself answering 404. */
export function isMissingRoute(response: ApiResponse): boolean {
  return response.status === 404 && /^Route /.test(String(response.body?.error?.message ?? ''))
}

function expectStatus(response: ApiResponse, status: number, what: string): any {
  if (response.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`)
  }
  return response.body
}

export async function issueToken(baseUrl: string, username: string, password: string): Promise<string> {
  const response = await call(baseUrl, 'POST', '/v1/tokens', { body: { username, password } })
  return expectStatus(response, 200, `token for ${username}`).token
}

export interface ArrangeInput {
  serverUrl: string
  ceilingUrl: string
  admin: { email: string; password: string }
  benchUser: { email: string; password: string }
}

/**
 * The scene every scenario acts in, built through the API: the platform administrator creates the bench
 * tenant and a custom tenant role holding every permission, and makes the bench user an accepted member
 * with that role; that user (a tenant member, not a platform administrator) creates the sub-tenant new
 * tenants hang from, and its token drives the scenarios.
 */
export async function arrange(input: ArrangeInput): Promise<Arrangement> {
  const { serverUrl } = input
  const adminToken = await issueToken(serverUrl, input.admin.email, input.admin.password)
  const regionId = REGIONS[0]!.id

  const tenant = expectStatus(
    await call(serverUrl, 'POST', '/v1/tenants', {
      token: adminToken,
      body: { name: 'Bench', regionId, description: 'The tenant the benchmark works in' },
    }),
    201,
    'create the bench tenant',
  ).result

  // A custom tenant role with every permission, so that effective permissions are computed through a
  // tenant's own role (docs/api.md#tenant-roles) as production callers' are, not a built-in one.
  const role = expectStatus(
    await call(serverUrl, 'POST', `/v1/tenants/${tenant.id}/roles`, {
      token: adminToken,
      body: {
        name: 'Bench operator',
        description: 'Every permission, as a tenant role',
        permissions: PERMISSIONS,
      },
    }),
    201,
    'create the bench tenant role',
  ).result

  expectStatus(
    await call(serverUrl, 'POST', `/v1/tenants/${tenant.id}/users`, {
      token: adminToken,
      body: { email: input.benchUser.email, roleId: role.id, status: 'accepted' },
    }),
    201,
    'make the bench user a member of the bench tenant with the custom role',
  )

  const token = await issueToken(serverUrl, input.benchUser.email, input.benchUser.password)
  const parent = expectStatus(
    await call(serverUrl, 'POST', '/v1/tenants', {
      token,
      body: { name: 'Bench parent', regionId, parentId: tenant.id },
    }),
    201,
    'create the parent of the created tenants (as the tenant Administrator)',
  ).result

  const row = expectStatus(
    await call(input.ceilingUrl, 'POST', '/insert', { body: { name: 'Selected by the select ceiling' } }),
    201,
    'insert the row the select ceiling reads',
  ).result

  // SCIM (docs/scim.md): a scim key of the bench tenant with the custom role, and one user it provisioned,
  // whom the find scenario looks up by userName as Entra ID does on every cycle.
  const scimToken = expectStatus(
    await call(serverUrl, 'POST', `/v1/tenants/${tenant.id}/api-keys`, {
      token: adminToken,
      body: { name: 'Bench directory', roleId: role.id, scope: 'scim' },
    }),
    201,
    'create the bench SCIM key',
  ).result.token as string
  const scimUserName = 'scim-found@bench.test'
  const scimHeaders = { authorization: `Bearer ${scimToken}` }
  const created = await fetch(`${serverUrl}/scim/v2/tenants/${tenant.id}/Users`, {
    method: 'POST',
    headers: { ...scimHeaders, 'content-type': 'application/scim+json' },
    body: JSON.stringify({ userName: scimUserName, name: { givenName: 'Found', familyName: 'User' } }),
  })
  if (created.status !== 201)
    throw new Error(`create the SCIM user: ${created.status} ${await created.text()}`)

  return {
    token,
    tenantId: tenant.id,
    parentId: parent.id,
    ceilingRowId: String(row.id),
    scimToken,
    scimUserName,
  }
}
