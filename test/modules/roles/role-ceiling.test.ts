import { beforeAll, describe, expect, it } from 'vitest'
import { PERMISSIONS, type Permission, permissionIds, ROLE_IDS } from '../../../src/access/permissions.js'
import {
  createTenantAsAdmin,
  insertMembership,
  insertUser,
  memberWithToken,
  uniqueEmail,
  uniqueName,
} from '../../helpers/fixtures.js'
import { apiKeyWithRole, createRole } from '../../helpers/roles.js'
import { FollowingClock, type RequestOptions, useTestApp } from '../../helpers/test-app.js'

/**
 * The role ceiling applied to roles themselves (docs/api.md#tenant-roles), and to every path that assigns a custom
 * role (docs/product.md#role-ceiling). Each test is an attack that succeeds without the defence: a caller with MANAGE_ALL_ROLES
 * writing a role above itself, changing a role held by someone above it, or handing out a custom role
 * above itself through invitations, membership changes, bulk rows and API keys.
 */

const t = useTestApp({ clock: new FollowingClock() })
let adminToken: string

beforeAll(async () => {
  adminToken = await t.adminToken()
})

const ALL: readonly Permission[] = PERMISSIONS
const subset = (assigned: readonly Permission[], held: readonly Permission[]) =>
  assigned.every((p) => held.includes(p))

/** Every single permission, none, all, and a fixed-seed sample of other subsets. */
function assignedSets(): Permission[][] {
  const sets: Permission[][] = [[], [...ALL], ...ALL.map((p) => [p])]
  let seed = 0x1f2e3d4c
  for (let i = 0; i < 8; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    sets.push(ALL.filter((_p, bit) => seed & (1 << (bit + 3))))
  }
  return sets
}

interface Caller {
  label: string
  auth: RequestOptions
  held: readonly Permission[]
}

describe('the ceiling on roles themselves', () => {
  it('creates and changes a role exactly when its permissions are within the caller’s, for callers holding every catalogue-minus-one', async () => {
    const tenant = await createTenantAsAdmin(t)
    const callers: Caller[] = [{ label: 'tenant Administrator', auth: { token: '' }, held: ALL }]
    callers[0]!.auth = { token: (await memberWithToken(t, tenant.id, ROLE_IDS.administrator)).token }
    const heldSets: Permission[][] = [
      ['MANAGE_ALL_ROLES'],
      ...ALL.filter((p) => p !== 'MANAGE_ALL_ROLES').map((missing) => ALL.filter((p) => p !== missing)),
    ]
    for (const held of heldSets) {
      const role = await createRole(t, tenant.id, { permissions: held })
      const member = await memberWithToken(t, tenant.id, role.id)
      callers.push({
        label: `member holding ${held.length} permissions`,
        auth: { token: member.token },
        held,
      })
    }
    const keyHeld: Permission[] = ['MANAGE_ALL_ROLES', 'VIEW_ALL_USERS', 'VIEW_ALL_ROLES']
    const keyRole = await createRole(t, tenant.id, { permissions: keyHeld })
    callers.push({ label: 'API key', auth: await apiKeyWithRole(t, tenant.id, keyRole.id), held: keyHeld })

    const outcomes: string[] = []
    const expected: string[] = []
    for (const caller of callers) {
      const target = await createRole(t, tenant.id, { permissions: [] })
      let stored: readonly Permission[] = []
      for (const assigned of assignedSets()) {
        const within = subset(assigned, caller.held)
        const label = `${caller.label} [${caller.held.length === ALL.length ? 'all' : ALL.filter((p) => !caller.held.includes(p)).join() || 'all'} missing] → {${assigned.join()}}`
        const created = await t.request('POST', `/v1/tenants/${tenant.id}/roles`, {
          ...caller.auth,
          body: { name: uniqueName('Role'), permissions: assigned },
        })
        outcomes.push(`${label} create: ${created.status} ${created.body.error?.reason ?? ''}`)
        expected.push(`${label} create: ${within ? '201 ' : '403 role_exceeds_caller'}`)
        if (created.status === 403) expect(created.body.error.attribute).toHaveProperty('permissions')

        const changed = await t.request('PUT', `/v1/tenants/${tenant.id}/roles/${target.id}`, {
          ...caller.auth,
          body: { permissions: permissionIds(assigned) },
        })
        outcomes.push(`${label} update: ${changed.status} ${changed.body.error?.reason ?? ''}`)
        expected.push(`${label} update: ${within ? '200 ' : '403 role_exceeds_caller'}`)
        if (changed.status === 200) stored = assigned
      }
      const read = await t.request('GET', `/v1/tenants/${tenant.id}/roles/${target.id}`, {
        token: adminToken,
      })
      expect(read.body.result.permissions).toEqual(permissionIds(stored))
    }
    expect(outcomes).toEqual(expected)
    expect(outcomes.some((o) => o.includes('role_exceeds_caller'))).toBe(true)
    expect(outcomes.filter((o) => o.includes(': 201')).length).toBeGreaterThan(callers.length)
  }, 300_000)

  it('does not let a Supervisor with MANAGE_ALL_ROLES write itself an Administrator', async () => {
    const tenant = await createTenantAsAdmin(t)
    const managerPermissions: Permission[] = [
      'VIEW_ALL_USERS',
      'MANAGE_ALL_USERS',
      'MANAGE_TENANT_ENROLLMENT',
      'VIEW_ALL_PROVIDERS',
      'VIEW_ALL_ROLES',
      'MANAGE_ALL_ROLES',
    ]
    const own = await createRole(t, tenant.id, { permissions: managerPermissions })
    const manager = await memberWithToken(t, tenant.id, own.id)
    const escalate = await t.request('PUT', `/v1/tenants/${tenant.id}/roles/${own.id}`, {
      token: manager.token,
      body: { permissions: [...managerPermissions, 'MANAGE_TENANT'] },
    })
    expect(escalate.status).toBe(403)
    expect(escalate.body.error.reason).toBe('role_exceeds_caller')
    const create = await t.request('POST', `/v1/tenants/${tenant.id}/roles`, {
      token: manager.token,
      body: { name: 'Shadow admin', permissions: [...ALL] },
    })
    expect(create.status).toBe(403)
    // Nor change a role that is above it as it stands, even cosmetically.
    const above = await createRole(t, tenant.id, { permissions: ['MANAGE_TENANT'] })
    const rename = await t.request('PUT', `/v1/tenants/${tenant.id}/roles/${above.id}`, {
      token: manager.token,
      body: { name: 'Renamed', active: false },
    })
    expect(rename.status).toBe(403)
    expect(rename.body.error.reason).toBe('role_exceeds_caller')
    const login = await t.request('POST', '/v1/login', { token: manager.token })
    expect(login.body.result.tenants[0].tenantPermissions).toEqual(
      ALL.filter((p) => managerPermissions.includes(p)),
    )
    const stored = await t.request('GET', `/v1/tenants/${tenant.id}/roles/${above.id}`, { token: adminToken })
    expect(stored.body.result).toMatchObject({ name: above.name, active: true })
  })

  it('refuses to change a role held by someone above the caller, and allows it once nobody above holds it', async () => {
    const parent = await createTenantAsAdmin(t)
    const tenant = await createTenantAsAdmin(t, { parentId: parent.id })
    const managerRole = await createRole(t, tenant.id, {
      permissions: ['MANAGE_ALL_ROLES', 'VIEW_ALL_ROLES', 'VIEW_ALL_USERS', 'MANAGE_TENANT_ENROLLMENT'],
    })
    const manager = await memberWithToken(t, tenant.id, managerRole.id)
    const plain = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS'] })

    // Held by the parent's Administrator (who holds everything in the tenant through the parent).
    const boss = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: parent.id,
      userId: boss.id,
      roleId: ROLE_IDS.administrator,
    })
    await insertMembership(t.database.handle.db, { tenantId: tenant.id, userId: boss.id, roleId: plain.id })
    t.ctx.access.invalidate()
    const path = `/v1/tenants/${tenant.id}/roles/${plain.id}`
    for (const body of [{ active: false }, { permissions: [] }, { name: 'Demoted' }]) {
      const response = await t.request('PUT', path, { token: manager.token, body })
      expect(response.status, JSON.stringify(body)).toBe(403)
      expect(response.body.error).toMatchObject({
        reason: 'role_exceeds_caller',
        attribute: { roleId: 'is held by someone above the caller' },
      })
    }
    // Held by a platform administrator (any membership status counts) — the same.
    const platformAdmin = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const second = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS'] })
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: platformAdmin.id,
      roleId: second.id,
      status: 'invited',
    })
    const refused = await t.request('PUT', `/v1/tenants/${tenant.id}/roles/${second.id}`, {
      token: manager.token,
      body: { active: false },
    })
    expect(refused.status).toBe(403)

    // Held only by an Agent-like member: the manager may change it.
    const peer = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS'] })
    await memberWithToken(t, tenant.id, peer.id)
    const allowed = await t.request('PUT', `/v1/tenants/${tenant.id}/roles/${peer.id}`, {
      token: manager.token,
      body: { active: false },
    })
    expect(allowed.status).toBe(200)
    expect((await t.request('GET', path, { token: adminToken })).body.result.active).toBe(true)
  })
})

describe('the ceiling on every path that assigns a custom role', () => {
  it('allows a custom role within the caller’s permissions and refuses one above, on invite, create-and-invite, membership update, bulk rows and API keys', async () => {
    const parent = await createTenantAsAdmin(t)
    const tenant = await createTenantAsAdmin(t, { parentId: parent.id })
    const enroller = await createRole(t, tenant.id, {
      permissions: [
        'MANAGE_TENANT_ENROLLMENT',
        'MANAGE_ALL_APP_CREDENTIALS',
        'MANAGE_ALL_USERS',
        'VIEW_ALL_USERS',
      ],
    })
    const caller = await memberWithToken(t, tenant.id, enroller.id)
    const roles = {
      within: await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS'] }),
      beyond: await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS', 'MANAGE_TENANT'] }),
      sharedWithin: await createRole(t, parent.id, { permissions: ['VIEW_ALL_USERS'], shared: true }),
      sharedBeyond: await createRole(t, parent.id, { permissions: ['MANAGE_ALL_PROVIDERS'], shared: true }),
      unshared: await createRole(t, parent.id, { permissions: ['VIEW_ALL_USERS'] }),
    }
    const want = (name: keyof typeof roles, ok: number) =>
      name === 'beyond' || name === 'sharedBeyond'
        ? '403 role_exceeds_caller'
        : name === 'unshared'
          ? '400 validation_failed'
          : `${ok}`
    const got = (status: number, error?: { reason: string }) =>
      status < 300 ? `${status}` : `${status} ${error?.reason}`

    const outcomes: string[] = []
    const expected: string[] = []
    const users = `/v1/tenants/${tenant.id}/users`
    for (const [name, role] of Object.entries(roles) as [keyof typeof roles, { id: string }][]) {
      const existing = await insertUser(t.database.handle.db)
      const invite = await t.request('POST', users, {
        token: caller.token,
        body: { email: existing.email, roleId: role.id, status: 'accepted' },
      })
      outcomes.push(`${name} invite: ${got(invite.status, invite.body.error)}`)
      expected.push(`${name} invite: ${want(name, 201)}`)

      const createAndInvite = await t.request('POST', users, {
        token: caller.token,
        body: { email: uniqueEmail(), roleId: role.id, platformRoleId: ROLE_IDS.platformUser },
      })
      outcomes.push(`${name} create-and-invite: ${got(createAndInvite.status, createAndInvite.body.error)}`)
      expected.push(`${name} create-and-invite: ${want(name, 201)}`)

      const member = await insertUser(t.database.handle.db)
      await insertMembership(t.database.handle.db, {
        tenantId: tenant.id,
        userId: member.id,
        roleId: ROLE_IDS.agent,
      })
      t.ctx.access.invalidate()
      const update = await t.request('PUT', `${users}/${member.id}`, {
        token: caller.token,
        body: { roleId: role.id },
      })
      outcomes.push(`${name} membership update: ${got(update.status, update.body.error)}`)
      expected.push(`${name} membership update: ${want(name, 200)}`)

      const bulk = await t.request('POST', '/v1/users', {
        token: caller.token,
        body: [
          { email: uniqueEmail(), roleId: ROLE_IDS.platformUser, tenantId: tenant.id, tenantRoleId: role.id },
        ],
      })
      outcomes.push(`${name} bulk row: ${got(bulk.body.result[0].status, bulk.body.result[0].error)}`)
      expected.push(`${name} bulk row: ${want(name, 201)}`)

      const key = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
        token: caller.token,
        body: { name: uniqueName('Key'), roleId: role.id },
      })
      outcomes.push(`${name} API key: ${got(key.status, key.body.error)}`)
      expected.push(`${name} API key: ${want(name, 201)}`)
    }
    expect(outcomes).toEqual(expected)
  }, 120_000)

  it('refuses to change a member or a key holding a custom role above the caller', async () => {
    const tenant = await createTenantAsAdmin(t)
    const enroller = await createRole(t, tenant.id, {
      permissions: ['MANAGE_TENANT_ENROLLMENT', 'MANAGE_ALL_APP_CREDENTIALS', 'VIEW_ALL_USERS'],
    })
    const caller = await memberWithToken(t, tenant.id, enroller.id)
    const beyond = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS', 'MANAGE_TENANT'] })
    const member = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: member.id,
      roleId: beyond.id,
    })
    t.ctx.access.invalidate()
    const demote = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${member.id}`, {
      token: caller.token,
      body: { status: 'disabled' },
    })
    expect(demote.status).toBe(403)
    expect(demote.body.error.reason).toBe('role_exceeds_caller')

    const key = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
      token: adminToken,
      body: { name: uniqueName('Key'), roleId: beyond.id },
    })
    const disable = await t.request('PUT', `/v1/tenants/${tenant.id}/api-keys/${key.body.result.id}`, {
      token: caller.token,
      body: { status: 'disabled' },
    })
    expect(disable.status).toBe(403)
    expect(disable.body.error.reason).toBe('role_exceeds_caller')
  })
})
