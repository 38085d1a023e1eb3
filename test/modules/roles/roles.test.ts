import { uuidv7 } from 'uuidv7'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  BUILT_IN_ROLES,
  PERMISSION_IDS,
  PERMISSIONS,
  type Permission,
  permissionIds,
  ROLE_IDS,
} from '../../../src/access/permissions.js'
import {
  createTenantAsAdmin,
  insertMembership,
  insertUser,
  memberWithToken,
  uniqueEmail,
  uniqueName,
} from '../../helpers/fixtures.js'
import { FollowingClock, type RequestOptions, useTestApp } from '../../helpers/test-app.js'

const ROLE_FIELDS = [
  'id',
  'name',
  'description',
  'permissions',
  'tenantId',
  'builtIn',
  'active',
  'shared',
  'created',
  'createdBy',
  'updated',
  'updatedBy',
].sort()

const t = useTestApp({ clock: new FollowingClock() })
let adminToken: string

beforeAll(async () => {
  adminToken = await t.adminToken()
})

const roleById = new Map(BUILT_IN_ROLES.map((role) => [role.id, role]))
const PLATFORM_ROLES = BUILT_IN_ROLES.filter((role) => role.scope === 'platform')
const TENANT_ROLES = BUILT_IN_ROLES.filter((role) => role.scope === 'tenant')

/** Whether every permission of `assigned` is in `held`: the rule the ceiling must enforce. */
function subset(assigned: readonly Permission[], held: readonly Permission[]): boolean {
  return assigned.every((permission) => held.includes(permission))
}

/** A role owned by one tenant, written straight into the database (the scene, not the API under test). */
async function insertTenantRole(
  tenantId: string,
  permissions: Permission[],
  name = uniqueName('Role'),
  shared = false,
) {
  const now = new Date()
  const id = uuidv7()
  await t.database.handle.db
    .insertInto('roles')
    .values({
      id,
      scope: 'tenant',
      tenant_id: tenantId,
      name,
      name_key: name.toLowerCase(),
      shared,
      description: 'custom',
      permissions,
      built_in: false,
      created: now,
      created_by: null,
      updated: now,
      updated_by: null,
    })
    .execute()
  return { id, name, permissions }
}

interface Caller {
  label: string
  auth: RequestOptions
  /** Permissions of the caller's platform role: the ceiling for platform roles. */
  platform: readonly Permission[]
  /** Effective permissions in the tenant under test: the ceiling for tenant roles there. */
  inTenant: readonly Permission[]
}

/**
 * Every kind of caller of the issue: the platform administrator, a Platform User who is the tenant's
 * Administrator, Supervisor or Agent, and an API key of the tenant with each built-in tenant role.
 */
async function callersOf(tenantId: string): Promise<Caller[]> {
  const callers: Caller[] = [
    {
      label: 'platform administrator',
      auth: { token: adminToken },
      platform: PERMISSIONS,
      inTenant: PERMISSIONS,
    },
  ]
  for (const role of TENANT_ROLES) {
    const member = await memberWithToken(t, tenantId, role.id)
    callers.push({
      label: `Platform User who is tenant ${role.name}`,
      auth: { token: member.token },
      platform: [],
      inTenant: role.permissions,
    })
  }
  for (const role of TENANT_ROLES) {
    const key = await t.request('POST', `/v1/tenants/${tenantId}/api-keys`, {
      token: adminToken,
      body: { name: uniqueName('Key'), roleId: role.id },
    })
    expect(key.status).toBe(201)
    const authorization = `Basic ${Buffer.from(`${key.body.result.id}:${key.body.result.secret}`).toString('base64')}`
    callers.push({
      label: `API key with role ${role.name}`,
      auth: { authorization },
      platform: [],
      inTenant: role.permissions,
    })
  }
  return callers
}

describe('GET /v1/permissions and the roles', () => {
  it('lists the closed permission catalogue, each permission with its fixed id', async () => {
    const response = await t.request('GET', '/v1/permissions', { token: adminToken })
    expect(response.status).toBe(200)
    expect(response.body.result.map((p: { name: string }) => p.name)).toEqual([...PERMISSIONS])
    for (const permission of response.body.result) {
      expect(typeof permission.description).toBe('string')
      expect(permission.id).toBe(PERMISSION_IDS[permission.name as Permission])
    }
    // Fixed constants: these two are pinned here so that a change to them fails a test.
    expect(PERMISSION_IDS.MANAGE_TENANT).toBe('2c962146-93fa-408f-9952-3bc953ab38b1')
    expect(PERMISSION_IDS.MANAGE_WEBHOOKS).toBe('97e2c64b-f320-4ae9-9af4-b3903863b9a3')
    expect(new Set(Object.values(PERMISSION_IDS)).size).toBe(PERMISSIONS.length)
  })

  it('lists the platform roles with the role record of docs/api.md#permissions-and-roles, readable by any user', async () => {
    const plain = await insertUser(t.database.handle.db)
    const token = await t.tokenFor(plain.email, plain.password)
    const response = await t.request('GET', '/v1/roles', { token })
    expect(response.status).toBe(200)
    const roles = response.body.result
    expect(roles.map((r: { id: string }) => r.id).sort()).toEqual(PLATFORM_ROLES.map((r) => r.id).sort())
    for (const role of roles) {
      expect(Object.keys(role).sort()).toEqual(ROLE_FIELDS)
      const builtIn = roleById.get(role.id)!
      expect(role.name).toBe(builtIn.name)
      expect(role.permissions).toEqual(permissionIds(builtIn.permissions))
      expect(role.tenantId).toBeNull()
      expect(role.builtIn).toBe(true)
      expect(role.created).toMatch(/Z$/)
    }
  })

  it('reads each built-in role by id, and answers 404 role_not_found for an unknown one', async () => {
    for (const builtIn of BUILT_IN_ROLES) {
      const response = await t.request('GET', `/v1/roles/${builtIn.id}`, { token: adminToken })
      expect(response.status).toBe(200)
      expect(response.body.result).toMatchObject({
        id: builtIn.id,
        name: builtIn.name,
        permissions: permissionIds(builtIn.permissions),
        builtIn: true,
        active: true,
        shared: false,
        tenantId: null,
      })
    }
    const unknown = await t.request('GET', '/v1/roles/00000000-0000-4000-8000-000000000000', {
      token: adminToken,
    })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.reason).toBe('role_not_found')
  })

  it('lists a tenant’s roles: the built-in ones, its own and its ancestors’ shared ones, never another tenant’s', async () => {
    const parent = await createTenantAsAdmin(t)
    const child = await createTenantAsAdmin(t, { parentId: parent.id })
    const other = await createTenantAsAdmin(t)
    const parentShared = await insertTenantRole(parent.id, ['VIEW_ALL_USERS'], uniqueName('Role'), true)
    const parentOwn = await insertTenantRole(parent.id, ['VIEW_ALL_USERS'])
    const childRole = await insertTenantRole(child.id, ['VIEW_ALL_PROVIDERS'])
    const otherRole = await insertTenantRole(other.id, ['VIEW_ALL_USERS'])
    const reader = await memberWithToken(t, child.id, ROLE_IDS.supervisor)

    const response = await t.request('GET', `/v1/tenants/${child.id}/roles`, { token: reader.token })
    expect(response.status).toBe(200)
    const ids = response.body.result.map((r: { id: string }) => r.id).sort()
    expect(ids).toEqual([...TENANT_ROLES.map((r) => r.id), parentShared.id, childRole.id].sort())
    expect(ids).not.toContain(parentOwn.id)
    const own = response.body.result.find((r: { id: string }) => r.id === childRole.id)
    expect(own).toMatchObject({
      tenantId: child.id,
      builtIn: false,
      permissions: [PERMISSION_IDS.VIEW_ALL_PROVIDERS],
    })

    const paged = await t.request('GET', `/v1/tenants/${child.id}/roles?limit=2`, { token: reader.token })
    expect(paged.body.result).toHaveLength(2)
    expect(typeof paged.body.nextCursor).toBe('string')

    const invisible = await t.request('GET', `/v1/tenants/${other.id}/roles`, { token: reader.token })
    expect(invisible.status).toBe(404)
    expect(invisible.body.error.reason).toBe('tenant_not_found')
    const foreignRole = await t.request('GET', `/v1/roles/${otherRole.id}`, { token: reader.token })
    expect(foreignRole.status).toBe(404)
    const ownRole = await t.request('GET', `/v1/roles/${childRole.id}`, { token: reader.token })
    expect(ownRole.status).toBe(200)

    // Reading roles needs VIEW_ALL_ROLES or MANAGE_ALL_ROLES (docs/api.md#tenant-roles): an Agent may not.
    const agent = await memberWithToken(t, child.id, ROLE_IDS.agent)
    const denied = await t.request('GET', `/v1/tenants/${child.id}/roles`, { token: agent.token })
    expect(denied.status).toBe(403)
    expect(denied.body.error.reason).toBe('permission_denied')
  })
})

describe('the role ceiling on platform users', () => {
  it('allows assigning a built-in role exactly when its permissions are a subset of the caller’s, on every path', async () => {
    const tenant = await createTenantAsAdmin(t)
    const callers = await callersOf(tenant.id)
    const outcomes: string[] = []
    const expected: string[] = []

    for (const caller of callers) {
      const mayManageUsers =
        caller.platform.includes('MANAGE_ALL_USERS') || caller.inTenant.includes('MANAGE_ALL_USERS')
      for (const assigned of BUILT_IN_ROLES) {
        const verdict = (field: string, success: number) =>
          !mayManageUsers
            ? '403 permission_denied'
            : assigned.scope !== 'platform'
              ? `400 validation_failed ${field}`
              : subset(assigned.permissions, caller.platform)
                ? `${success}`
                : `403 role_exceeds_caller ${field}`
        const summarize = (status: number, body: any, field: string) =>
          status < 300
            ? `${status}`
            : `${status} ${body.error.reason}${body.error.attribute?.[field] ? ` ${field}` : ''}`

        // POST roleId
        const viaRoleId = await t.request('POST', '/v1/users', {
          ...caller.auth,
          body: { email: uniqueEmail(), roleId: assigned.id },
        })
        outcomes.push(
          `${caller.label} → ${assigned.name} via roleId: ${summarize(viaRoleId.status, viaRoleId.body, 'roleId')}`,
        )
        expected.push(`${caller.label} → ${assigned.name} via roleId: ${verdict('roleId', 201)}`)
        if (viaRoleId.status === 201) expect(viaRoleId.body.result.roleId).toBe(assigned.id)

        // POST additionalRoleIds
        const viaAdditional = await t.request('POST', '/v1/users', {
          ...caller.auth,
          body: { email: uniqueEmail(), roleId: ROLE_IDS.platformUser, additionalRoleIds: [assigned.id] },
        })
        outcomes.push(
          `${caller.label} → ${assigned.name} via additionalRoleIds: ${summarize(viaAdditional.status, viaAdditional.body, 'additionalRoleIds[0]')}`,
        )
        expected.push(
          `${caller.label} → ${assigned.name} via additionalRoleIds: ${verdict('additionalRoleIds[0]', 201)}`,
        )

        // PUT roleId and additionalRoleIds on a Platform User who is a member of the caller's tenant.
        for (const field of ['roleId', 'additionalRoleIds'] as const) {
          // Created without a password: no argon2 hash, so the matrix stays quick.
          const target = (
            await t.request('POST', '/v1/users', {
              token: adminToken,
              body: { email: uniqueEmail(), roleId: ROLE_IDS.platformUser },
            })
          ).body.result
          await insertMembership(t.database.handle.db, {
            tenantId: tenant.id,
            userId: target.id,
            roleId: ROLE_IDS.agent,
          })
          t.ctx.access.invalidate()
          const body = field === 'roleId' ? { roleId: assigned.id } : { additionalRoleIds: [assigned.id] }
          const put = await t.request('PUT', `/v1/users/${target.id}`, { ...caller.auth, body })
          const name = field === 'roleId' ? 'roleId' : 'additionalRoleIds[0]'
          outcomes.push(
            `${caller.label} → ${assigned.name} via PUT ${field}: ${summarize(put.status, put.body, name)}`,
          )
          expected.push(`${caller.label} → ${assigned.name} via PUT ${field}: ${verdict(name, 200)}`)
          const stored = (await t.request('GET', `/v1/users/${target.id}`, { token: adminToken })).body.result
          if (put.status === 200) {
            if (field === 'roleId') expect(stored.roleId).toBe(assigned.id)
            else expect(stored.additionalRoleIds).toEqual([assigned.id])
          } else {
            expect(stored.roleId).toBe(ROLE_IDS.platformUser)
            expect(stored.additionalRoleIds).toEqual([])
          }
        }
      }
    }
    expect(outcomes).toEqual(expected)
    // The matrix is not vacuous: both outcomes occur.
    expect(outcomes.some((o) => o.endsWith(': 201'))).toBe(true)
    expect(outcomes.some((o) => o.includes('role_exceeds_caller'))).toBe(true)
    // About 250 requests: generous on a shared, busy machine.
  }, 180_000)

  it('does not let a Supervisor create or promote an administrator', async () => {
    const tenant = await createTenantAsAdmin(t)
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const email = uniqueEmail()
    const create = await t.request('POST', '/v1/users', {
      token: supervisor.token,
      body: { email, roleId: ROLE_IDS.platformAdministrator },
    })
    expect(create.status).toBe(403)
    expect(create.body.error.reason).toBe('role_exceeds_caller')
    expect(create.body.error.attribute).toHaveProperty('roleId')
    const lookup = await t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, {
      token: adminToken,
    })
    expect(lookup.status).toBe(404)

    const colleague = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: colleague.id,
      roleId: ROLE_IDS.agent,
    })
    t.ctx.access.invalidate()
    for (const body of [
      { roleId: ROLE_IDS.platformAdministrator },
      { additionalRoleIds: [ROLE_IDS.platformAdministrator] },
    ]) {
      const promote = await t.request('PUT', `/v1/users/${colleague.id}`, { token: supervisor.token, body })
      expect(promote.status).toBe(403)
      expect(promote.body.error.reason).toBe('role_exceeds_caller')
    }
    // Nor itself.
    const self = await t.request('PUT', `/v1/users/${supervisor.id}`, {
      token: supervisor.token,
      body: { roleId: ROLE_IDS.platformAdministrator },
    })
    expect(self.status).toBe(403)
    const stored = await t.request('GET', `/v1/users/${colleague.id}`, { token: adminToken })
    expect(stored.body.result.roleId).toBe(ROLE_IDS.platformUser)
    expect(stored.body.result.additionalRoleIds).toEqual([])
  })
})

describe('the role ceiling on API keys', () => {
  it('allows a key’s tenant role exactly when it is within the caller’s effective permissions there', async () => {
    const tenant = await createTenantAsAdmin(t)
    const callers = await callersOf(tenant.id)
    // A narrower role that may manage keys: the only kind of caller the ceiling can refuse here.
    const keyManagerRole = await insertTenantRole(tenant.id, ['MANAGE_ALL_APP_CREDENTIALS', 'VIEW_ALL_USERS'])
    const keyManager = await memberWithToken(t, tenant.id, keyManagerRole.id)
    callers.push({
      label: 'Platform User who is tenant key manager',
      auth: { token: keyManager.token },
      platform: [],
      inTenant: keyManagerRole.permissions,
    })
    const assignable = [...BUILT_IN_ROLES, { ...keyManagerRole, scope: 'tenant' as const }]

    const outcomes: string[] = []
    const expected: string[] = []
    for (const caller of callers) {
      const mayManageKeys = caller.inTenant.includes('MANAGE_ALL_APP_CREDENTIALS')
      for (const assigned of assignable) {
        const response = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
          ...caller.auth,
          body: { name: uniqueName('Key'), roleId: assigned.id },
        })
        const got = response.status === 201 ? '201' : `${response.status} ${response.body.error.reason}`
        const want = !mayManageKeys
          ? '403 permission_denied'
          : assigned.scope !== 'tenant'
            ? '400 validation_failed'
            : subset(assigned.permissions, caller.inTenant)
              ? '201'
              : '403 role_exceeds_caller'
        outcomes.push(`${caller.label} → key with ${assigned.name}: ${got}`)
        expected.push(`${caller.label} → key with ${assigned.name}: ${want}`)
        if (response.status === 201) expect(response.body.result.roleId).toBe(assigned.id)
        if (response.status === 403 && want.includes('role_exceeds_caller')) {
          expect(response.body.error.attribute).toHaveProperty('roleId')
        }
      }
    }
    expect(outcomes).toEqual(expected)
    expect(outcomes.some((o) => o.endsWith('role_exceeds_caller'))).toBe(true)
  })
})
