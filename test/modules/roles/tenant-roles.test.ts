import { beforeAll, describe, expect, it } from 'vitest'
import { PERMISSION_IDS, permissionIds, ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertUser, memberWithToken, uniqueName } from '../../helpers/fixtures.js'
import { apiKeyWithRole, createRole } from '../../helpers/roles.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'

/**
 * Tenant roles over HTTP (docs/api.md#tenant-roles): the record, names, read-only roles, who may read and write,
 * visibility up and down the tree, disabled roles, and changes reaching every holder at once.
 */

const t = useTestApp({ clock: new FollowingClock() })
let adminToken: string

beforeAll(async () => {
  adminToken = await t.adminToken()
})

const auditEvents = (targetId: string) =>
  t.database.handle.db
    .selectFrom('audit_events')
    .selectAll()
    .where('target_id', '=', targetId)
    .orderBy('occurred')
    .orderBy('id')
    .execute()

describe('creating and reading a tenant role', () => {
  it('creates a role from permission names and ids, answers ids, and reads it back three ways', async () => {
    const tenant = await createTenantAsAdmin(t)
    const response = await t.request('POST', `/v1/tenants/${tenant.id}/roles`, {
      token: adminToken,
      body: {
        name: '  QA reviewer ',
        description: null,
        permissions: ['VIEW_ALL_USERS', PERMISSION_IDS.VIEW_ALL_PROVIDERS.toUpperCase(), 'VIEW_ALL_USERS'],
        id: '00000000-0000-4000-8000-000000000000',
      },
    })
    expect(response.status).toBe(201)
    const role = response.body.result
    expect(response.headers.location).toBe(`/v1/tenants/${tenant.id}/roles/${role.id}`)
    expect(role).toMatchObject({
      tenantId: tenant.id,
      name: 'QA reviewer',
      description: '',
      permissions: [PERMISSION_IDS.VIEW_ALL_USERS, PERMISSION_IDS.VIEW_ALL_PROVIDERS],
      active: true,
      shared: false,
      builtIn: false,
    })
    expect(role.id).not.toBe('00000000-0000-4000-8000-000000000000')
    expect(role.createdBy).toBe(role.updatedBy)
    expect(role.created).toMatch(/Z$/)

    const viaTenant = await t.request('GET', `/v1/tenants/${tenant.id}/roles/${role.id}`, {
      token: adminToken,
    })
    expect(viaTenant.status).toBe(200)
    expect(viaTenant.body.result).toEqual(role)
    expect(viaTenant.headers.etag).toBeDefined()
    expect((await t.request('GET', `/v1/roles/${role.id}`, { token: adminToken })).body.result).toEqual(role)
    const list = await t.request('GET', `/v1/tenants/${tenant.id}/roles`, { token: adminToken })
    expect(list.body.result).toContainEqual(role)

    const [event] = await auditEvents(role.id)
    expect(event).toMatchObject({ action: 'role.created', tenant_id: tenant.id, target_type: 'role' })
    expect(event!.changes).toMatchObject({
      name: [null, 'QA reviewer'],
      permissions: [null, role.permissions],
      active: [null, true],
    })
  })

  it('lists every permission with its id from a tenant too, for callers who can see the tenant', async () => {
    const tenant = await createTenantAsAdmin(t)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const response = await t.request('GET', `/v1/tenants/${tenant.id}/permissions`, { token: agent.token })
    expect(response.status).toBe(200)
    expect(response.body.result.map((p: { id: string }) => p.id)).toEqual(Object.values(PERMISSION_IDS))
    const other = await createTenantAsAdmin(t)
    const hidden = await t.request('GET', `/v1/tenants/${other.id}/permissions`, { token: agent.token })
    expect(hidden.status).toBe(404)
  })

  it('refuses bad input naming the field, and stores nothing', async () => {
    const tenant = await createTenantAsAdmin(t)
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'X', permissions: ['VIEW_ALL_USERS', 'SUDO'] }, 'permissions[1]'],
      [{ name: 'X', permissions: ['00000000-0000-4000-8000-000000000000'] }, 'permissions[0]'],
      [{ name: 'X' }, 'permissions'],
      [{ permissions: [] }, 'name'],
      [{ name: '   ', permissions: [] }, 'name'],
      [{ name: 'a\u0007b', permissions: [] }, 'name'],
      [{ name: 'X', permissions: [], active: 'yes' }, 'active'],
    ]
    for (const [body, field] of cases) {
      const response = await t.request('POST', `/v1/tenants/${tenant.id}/roles`, { token: adminToken, body })
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(response.body.error.reason).toBe('validation_failed')
      expect(Object.keys(response.body.error.attribute)).toContain(field)
    }
    const list = await t.request('GET', `/v1/tenants/${tenant.id}/roles`, { token: adminToken })
    expect(list.body.result.filter((r: { builtIn: boolean }) => !r.builtIn)).toEqual([])
  })
})

describe('names', () => {
  it('are unique within a tenant on the normalized key, also against the built-in names', async () => {
    const tenant = await createTenantAsAdmin(t)
    await createRole(t, tenant.id, { name: 'Team lead', permissions: [] })
    for (const name of ['TEAM LEAD', '  team   lead ', 'ｔｅａｍ lead', 'administrator', ' Agent']) {
      const response = await t.request('POST', `/v1/tenants/${tenant.id}/roles`, {
        token: adminToken,
        body: { name, permissions: [] },
      })
      expect(response.status, name).toBe(409)
      expect(response.body.error.reason).toBe('role_name_taken')
      expect(response.body.error.message).toContain('already exists')
      expect(response.body.error.attribute).toEqual({ name: 'already exists' })
    }
    // Renaming onto a taken name is the same conflict; another tenant may use the name.
    const other = await createRole(t, tenant.id, { name: 'Workforce planner', permissions: [] })
    const rename = await t.request('PUT', `/v1/tenants/${tenant.id}/roles/${other.id}`, {
      token: adminToken,
      body: { name: 'team LEAD' },
    })
    expect(rename.status).toBe(409)
    expect(rename.body.error.reason).toBe('role_name_taken')
    await createRole(t, (await createTenantAsAdmin(t)).id, { name: 'Team lead', permissions: [] })
  })

  it('hold under concurrent creates: exactly one of many identical requests wins', async () => {
    const tenant = await createTenantAsAdmin(t)
    const name = uniqueName('Race')
    const responses = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.request('POST', `/v1/tenants/${tenant.id}/roles`, {
          token: adminToken,
          body: { name, permissions: ['VIEW_ALL_USERS'] },
        }),
      ),
    )
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409])
    const list = await t.request('GET', `/v1/tenants/${tenant.id}/roles`, { token: adminToken })
    expect(list.body.result.filter((r: { name: string }) => r.name === name)).toHaveLength(1)
  })
})

describe('who may read and write roles', () => {
  it('reads with VIEW_ALL_ROLES or MANAGE_ALL_ROLES, writes with MANAGE_ALL_ROLES, and hides other tenants', async () => {
    const tenant = await createTenantAsAdmin(t)
    const role = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS'] })
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const path = `/v1/tenants/${tenant.id}/roles`

    expect((await t.request('GET', `${path}/${role.id}`, { token: supervisor.token })).status).toBe(200)
    for (const [method, url, body] of [
      ['POST', path, { name: 'Nope', permissions: [] }],
      ['PUT', `${path}/${role.id}`, { description: 'changed' }],
    ] as const) {
      const response = await t.request(method, url, { token: supervisor.token, body })
      expect(response.status).toBe(403)
      expect(response.body.error.reason).toBe('permission_denied')
    }
    expect((await t.request('GET', `${path}/${role.id}`, { token: agent.token })).status).toBe(403)
    expect((await t.request('GET', `/v1/roles/${role.id}`, { token: agent.token })).status).toBe(404)

    const outsider = await memberWithToken(t, (await createTenantAsAdmin(t)).id)
    for (const [method, url] of [
      ['GET', path],
      ['GET', `${path}/${role.id}`],
      ['PUT', `${path}/${role.id}`],
      ['POST', path],
    ] as const) {
      const response = await t.request(method, url, {
        token: outsider.token,
        ...(method === 'GET' ? {} : { body: { name: 'Mine now', permissions: [] } }),
      })
      expect(response.status, `${method} ${url}`).toBe(404)
    }
    const stored = await t.request('GET', `${path}/${role.id}`, { token: adminToken })
    expect(stored.body.result.description).toBe('')
  })

  it('keeps built-in roles and an ancestor’s shared roles read-only (409 role_read_only)', async () => {
    const parent = await createTenantAsAdmin(t)
    const child = await createTenantAsAdmin(t, { parentId: parent.id })
    const shared = await createRole(t, parent.id, { permissions: ['VIEW_ALL_USERS'], shared: true })
    for (const [tenantId, roleId] of [
      [child.id, ROLE_IDS.administrator],
      [child.id, ROLE_IDS.agent],
      [child.id, shared.id],
    ] as const) {
      const response = await t.request('PUT', `/v1/tenants/${tenantId}/roles/${roleId}`, {
        token: adminToken,
        body: { permissions: [], name: 'Renamed' },
      })
      expect(response.status).toBe(409)
      expect(response.body.error.reason).toBe('role_read_only')
    }
    const agent = await t.request('GET', `/v1/roles/${ROLE_IDS.agent}`, { token: adminToken })
    expect(agent.body.result).toMatchObject({ name: 'Agent', permissions: permissionIds(['VIEW_ALL_USERS']) })
    // A platform role is not a tenant role at all.
    const platform = await t.request('PUT', `/v1/tenants/${child.id}/roles/${ROLE_IDS.platformUser}`, {
      token: adminToken,
      body: { name: 'Renamed' },
    })
    expect(platform.status).toBe(404)
  })
})

describe('updates', () => {
  it('change only what is sent, record role.updated with before and after, and repeat nothing', async () => {
    const tenant = await createTenantAsAdmin(t)
    const role = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS'] })
    const path = `/v1/tenants/${tenant.id}/roles/${role.id}`
    const response = await t.request('PUT', path, {
      token: adminToken,
      body: { description: 'Reviews calls', permissions: [PERMISSION_IDS.VIEW_ALL_PROVIDERS], shared: true },
    })
    expect(response.status).toBe(200)
    expect(response.body.result).toMatchObject({
      name: role.name,
      description: 'Reviews calls',
      permissions: [PERMISSION_IDS.VIEW_ALL_PROVIDERS],
      shared: true,
      active: true,
    })
    const same = await t.request('PUT', path, { token: adminToken, body: { ...response.body.result } })
    expect(same.status).toBe(200)
    const events = await auditEvents(role.id)
    expect(events.map((e) => e.action)).toEqual(['role.created', 'role.updated'])
    expect(events[1]!.changes).toEqual({
      description: ['', 'Reviews calls'],
      permissions: [[PERMISSION_IDS.VIEW_ALL_USERS], [PERMISSION_IDS.VIEW_ALL_PROVIDERS]],
      shared: [false, true],
    })
  })

  it('reach every holder at once in this process: members and API keys', async () => {
    const tenant = await createTenantAsAdmin(t)
    const role = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS'] })
    const member = await memberWithToken(t, tenant.id, role.id)
    const key = await apiKeyWithRole(t, tenant.id, role.id)
    const users = `/v1/tenants/${tenant.id}/users`
    const integrations = `/v1/tenants/${tenant.id}/integrations`
    for (const auth of [{ token: member.token }, key]) {
      expect((await t.request('GET', users, auth)).status).toBe(200)
      expect((await t.request('GET', integrations, auth)).status).toBe(403)
    }
    const change = await t.request('PUT', `/v1/tenants/${tenant.id}/roles/${role.id}`, {
      token: adminToken,
      body: { permissions: ['VIEW_ALL_PROVIDERS'] },
    })
    expect(change.status).toBe(200)
    for (const auth of [{ token: member.token }, key]) {
      expect((await t.request('GET', users, auth)).status).toBe(403)
      expect((await t.request('GET', integrations, auth)).status).toBe(200)
    }
  })
})

describe('a disabled role', () => {
  it('grants nothing to its holders, cannot be assigned on any path, and grants again once enabled', async () => {
    const tenant = await createTenantAsAdmin(t)
    const role = await createRole(t, tenant.id, { permissions: ['VIEW_ALL_USERS'] })
    const member = await memberWithToken(t, tenant.id, role.id)
    const key = await apiKeyWithRole(t, tenant.id, role.id)
    const users = `/v1/tenants/${tenant.id}/users`
    const rolePath = `/v1/tenants/${tenant.id}/roles/${role.id}`
    expect((await t.request('PUT', rolePath, { token: adminToken, body: { active: false } })).status).toBe(
      200,
    )

    // A member of the tenant still sees it (membership), but holds no permission there; a key sees nothing.
    expect((await t.request('GET', users, { token: member.token })).status).toBe(403)
    expect((await t.request('GET', users, key)).status).toBe(404)

    const invitee = await insertUser(t.database.handle.db)
    const other = await insertUser(t.database.handle.db)
    await t.request('POST', users, {
      token: adminToken,
      body: { email: other.email, roleId: ROLE_IDS.agent, status: 'accepted' },
    })
    const attempts = [
      await t.request('POST', users, { token: adminToken, body: { email: invitee.email, roleId: role.id } }),
      await t.request('PUT', `${users}/${other.id}`, { token: adminToken, body: { roleId: role.id } }),
      await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
        token: adminToken,
        body: { name: uniqueName('Key'), roleId: role.id },
      }),
    ]
    for (const response of attempts) {
      expect(response.status).toBe(400)
      expect(response.body.error.attribute).toEqual({ roleId: 'is a disabled role' })
    }
    const bulk = await t.request('POST', '/v1/users', {
      token: adminToken,
      body: [
        {
          email: `${uniqueName('bulk').replace(/\W/g, '')}@example.test`,
          roleId: ROLE_IDS.platformUser,
          tenantId: tenant.id,
          tenantRoleId: role.id,
        },
      ],
    })
    expect(bulk.body.result[0].status).toBe(400)
    expect(bulk.body.result[0].error.attribute).toEqual({ tenantRoleId: 'is a disabled role' })

    expect((await t.request('PUT', rolePath, { token: adminToken, body: { active: true } })).status).toBe(200)
    expect((await t.request('GET', users, { token: member.token })).status).toBe(200)
    expect((await t.request('GET', users, key)).status).toBe(200)
  })
})

describe('visibility up and down the tree', () => {
  it('offers a shared role to sub-tenants only, never to the parent’s siblings, and hides a sub-tenant’s roles above it', async () => {
    const root = await createTenantAsAdmin(t)
    const parent = await createTenantAsAdmin(t, { parentId: root.id })
    const sibling = await createTenantAsAdmin(t, { parentId: root.id })
    const child = await createTenantAsAdmin(t, { parentId: parent.id })
    const shared = await createRole(t, parent.id, { permissions: ['VIEW_ALL_USERS'], shared: true })
    const own = await createRole(t, parent.id, { permissions: ['VIEW_ALL_USERS'] })
    const childRole = await createRole(t, child.id, { permissions: ['VIEW_ALL_USERS'], shared: true })

    const listed = async (tenantId: string) =>
      (await t.request('GET', `/v1/tenants/${tenantId}/roles`, { token: adminToken })).body.result.map(
        (r: { id: string }) => r.id,
      )
    expect(await listed(child.id)).toEqual(expect.arrayContaining([shared.id, childRole.id]))
    expect(await listed(child.id)).not.toContain(own.id)
    expect(await listed(parent.id)).toEqual(expect.arrayContaining([shared.id, own.id]))
    expect(await listed(parent.id)).not.toContain(childRole.id)
    for (const id of [shared.id, own.id, childRole.id]) {
      expect(await listed(sibling.id)).not.toContain(id)
      expect(await listed(root.id)).not.toContain(id)
    }
    expect(
      (await t.request('GET', `/v1/tenants/${parent.id}/roles/${childRole.id}`, { token: adminToken }))
        .status,
    ).toBe(404)
    expect(
      (await t.request('GET', `/v1/tenants/${sibling.id}/roles/${shared.id}`, { token: adminToken })).status,
    ).toBe(404)
    expect(
      (await t.request('GET', `/v1/tenants/${child.id}/roles/${shared.id}`, { token: adminToken })).status,
    ).toBe(200)

    const assign = async (tenantId: string, roleId: string) => {
      const user = await insertUser(t.database.handle.db)
      return t.request('POST', `/v1/tenants/${tenantId}/users`, {
        token: adminToken,
        body: { email: user.email, roleId, status: 'accepted' },
      })
    }
    expect((await assign(child.id, shared.id)).status).toBe(201)
    for (const [tenantId, roleId] of [
      [child.id, own.id],
      [sibling.id, shared.id],
      [root.id, shared.id],
      [parent.id, childRole.id],
    ] as const) {
      const response = await assign(tenantId, roleId)
      expect(response.status).toBe(400)
      expect(response.body.error.attribute).toEqual({ roleId: 'does not name a tenant role' })
    }
  })
})
