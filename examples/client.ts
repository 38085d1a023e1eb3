/**
 * A typed client generated from the published OpenAPI document, in use: log in, create a tenant, list the
 * users. `npm run check:client` regenerates ./generated/tenantry.ts (openapi-typescript) from the document
 * the app factory builds and type-checks this file against it, so a change to a route's schema that would
 * break such a client fails CI. Run it against a server:
 *
 *   npx tsx examples/client.ts http://localhost:8080 admin@tenantry.local 'the password'
 */
import createClient from 'openapi-fetch'
import type { paths } from './generated/tenantry.js'

type TenantRecord =
  paths['/v1/tenants/{tenantId}']['get']['responses'][200]['content']['application/json']['result']

export interface ExampleOutcome {
  tenant: TenantRecord
  userEmails: string[]
}

export async function runExample(
  baseUrl: string,
  username: string,
  password: string,
): Promise<ExampleOutcome> {
  const anonymous = createClient<paths>({ baseUrl })
  const login = await anonymous.POST('/v1/tokens', { body: { username, password, ttl: 600 } })
  if (!login.data) throw new Error(`login failed: ${login.error?.error.reason}`)

  // The document's bearerAuth scheme: the token goes in `Authorization: Bearer <token>`.
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${login.data.token}` } })

  const regions = await client.GET('/v1/regions')
  const region = regions.data?.result[0]
  if (!region) throw new Error('no region to create a tenant in')

  const created = await client.POST('/v1/tenants', {
    body: { name: `Example tenant ${Date.now()}`, regionId: region.id, timezone: 'Europe/Dublin' },
  })
  if (created.error) {
    // The reasons this operation documents for a 409 (or any other status) are a typed union.
    throw new Error(`could not create the tenant: ${created.error.error.reason}`)
  }

  const users = await client.GET('/v1/users', { params: { query: { limit: 100 } } })
  if (!users.data) throw new Error(`could not list users: ${users.error.error.reason}`)
  return { tenant: created.data.result, userEmails: users.data.result.map((user) => user.email) }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [baseUrl = 'http://localhost:8080', username = 'admin@tenantry.local', password = ''] =
    process.argv.slice(2)
  const outcome = await runExample(baseUrl, username, password)
  console.log(
    `created tenant ${outcome.tenant.name} (${outcome.tenant.id}); users: ${outcome.userEmails.join(', ')}`,
  )
}
