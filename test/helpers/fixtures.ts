import type { Kysely } from 'kysely'
import { uuidv7 } from 'uuidv7'
import { REGIONS, ROLE_IDS } from '../../src/access/permissions.js'
import { hashPassword } from '../../src/crypto/passwords.js'
import type { Database, MembershipStatus } from '../../src/db/schema.js'
import type { TestApp } from './test-app.js'

/**
 * Rows written straight into a test's database, for arranging a scene that the API under test does not
 * create itself. Assertions always go through the API.
 */
export const REGION_ID = REGIONS[0]!.id

let counter = 0
export function uniqueName(prefix = 'Tenant'): string {
  counter += 1
  return `${prefix} ${process.pid}-${Date.now().toString(36)}-${counter}`
}

export function uniqueEmail(prefix = 'user'): string {
  counter += 1
  return `${prefix}.${process.pid}.${Date.now().toString(36)}.${counter}@example.test`
}

export interface FixtureUser {
  id: string
  email: string
  password: string
}

export async function insertUser(
  db: Kysely<Database>,
  options: { email?: string; password?: string; roleId?: string; status?: 'enabled' | 'disabled' } = {},
): Promise<FixtureUser> {
  const email = (options.email ?? uniqueEmail()).toLowerCase()
  const password = options.password ?? 'correct horse battery staple'
  const now = new Date(Date.now() - 1000)
  // Long before any test clock: a password verified for Basic is remembered only if verified after the
  // last change, and a test app's ManualClock stands still while the wall clock moves on.
  const passwordChangedAt = new Date('2000-01-01T00:00:00Z')
  const id = uuidv7()
  await db
    .insertInto('users')
    .values({
      id,
      email,
      role_id: options.roleId ?? ROLE_IDS.platformUser,
      status: options.status ?? 'enabled',
      password_hash: await hashPassword(password),
      password_changed_at: passwordChangedAt,
      created: now,
      updated: now,
    })
    .execute()
  return { id, email, password }
}

export async function insertMembership(
  db: Kysely<Database>,
  options: {
    tenantId: string
    userId: string
    roleId: string
    status?: MembershipStatus
    createdBy?: string
  },
): Promise<void> {
  const now = new Date()
  await db
    .insertInto('tenant_users')
    .values({
      tenant_id: options.tenantId,
      user_id: options.userId,
      role_id: options.roleId,
      status: options.status ?? 'accepted',
      created: now,
      created_by: options.createdBy ?? options.userId,
      updated: now,
      updated_by: options.createdBy ?? options.userId,
    })
    .execute()
}

/** Creates a tenant through the API as the platform administrator. */
export async function createTenantAsAdmin(
  t: TestApp,
  body: Record<string, unknown> = {},
): Promise<{ id: string; name: string; [key: string]: unknown }> {
  const response = await t.request('POST', '/v1/tenants', {
    token: await t.adminToken(),
    body: { name: uniqueName(), regionId: REGION_ID, ...body },
  })
  if (response.status !== 201) throw new Error(`tenant create failed: ${JSON.stringify(response.body)}`)
  return response.body.result
}

/**
 * A user who is an accepted member of `tenantId` with `roleId` (a built-in tenant role by default
 * Administrator), with a token. The way to act "as a tenant Administrator/Supervisor/Agent".
 */
export async function memberWithToken(
  t: TestApp,
  tenantId: string,
  roleId: string = ROLE_IDS.administrator,
): Promise<FixtureUser & { token: string }> {
  const user = await insertUser(t.database.handle.db)
  await insertMembership(t.database.handle.db, { tenantId, userId: user.id, roleId })
  t.ctx.access.invalidate()
  return { ...user, token: await t.tokenFor(user.email, user.password) }
}

/**
 * A fresh tenant of its own for one test (created through the API), with an Administrator member who has
 * a token: no test reads or filters another test's rows.
 */
export async function freshTenant(
  t: TestApp,
  body: Record<string, unknown> = {},
): Promise<{ tenant: { id: string; name: string }; admin: FixtureUser & { token: string } }> {
  const tenant = await createTenantAsAdmin(t, body)
  const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
  // Making the administrator changed a person, after which this process reads the revoked sessions again
  // at its next token check (docs/security.md). A process under load has done that read before a burst
  // arrives; do it here, so that a test's concurrent requests do not all queue behind it.
  await t.request('GET', `/v1/tenants/${tenant.id}`, { token: admin.token })
  return { tenant, admin }
}
