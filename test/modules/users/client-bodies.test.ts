import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import {
  createTenantAsAdmin,
  insertMembership,
  insertUser,
  REGION_ID,
  uniqueName,
} from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * The request bodies the existing clients send every day (docs/api.md#passwords-and-the-existing-clients-flows): whole records sent back, nulls for
 * "none", the platform id as a root tenant's parent; and the tenant-user fields and filter they read.
 */
const t = useTestApp()
let admin: string
let tenant: { id: string; name: string }

beforeAll(async () => {
  admin = await t.adminToken()
  tenant = await createTenantAsAdmin(t)
})

describe('the newer admin UI’s profile save', () => {
  it('sends the whole record back with nulls and unchanged roleId and status: 200', async () => {
    const user = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: user.id,
      roleId: ROLE_IDS.agent,
    })
    const other = await createTenantAsAdmin(t)
    t.ctx.access.invalidate()
    const own = await t.tokenFor(user.email, user.password)
    const record = (await t.request('GET', `/v1/users/${user.id}`, { token: own })).body.result

    const saved = await t.request('PUT', `/v1/users/${user.id}`, {
      token: own,
      body: {
        ...record,
        firstName: 'Grace',
        lastName: null,
        externalId: null,
        personalTelephone: null,
        defaultTenant: tenant.id,
      },
    })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    expect(saved.body.result).toMatchObject({
      firstName: 'Grace',
      lastName: '',
      externalId: '',
      personalTelephone: null,
      defaultTenant: tenant.id,
      roleId: ROLE_IDS.platformUser,
      status: 'enabled',
    })

    // A real change of its own role or status is still refused; so is a default tenant it is not in.
    const promote = await t.request('PUT', `/v1/users/${user.id}`, {
      token: own,
      body: { ...record, roleId: ROLE_IDS.platformAdministrator },
    })
    expect(promote.status).toBe(403)
    const elsewhere = await t.request('PUT', `/v1/users/${user.id}`, {
      token: own,
      body: { defaultTenant: other.id },
    })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.body.error.attribute).toHaveProperty('defaultTenant')
    const read = await t.request('GET', `/v1/users/${user.id}`, { token: admin })
    expect(read.body.result).toMatchObject({ roleId: ROLE_IDS.platformUser, defaultTenant: tenant.id })
  })

  it('refuses a default tenant where the membership is only invited', async () => {
    const user = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: user.id,
      roleId: ROLE_IDS.agent,
      status: 'invited',
    })
    const own = await t.tokenFor(user.email, user.password)
    const response = await t.request('PUT', `/v1/users/${user.id}`, {
      token: own,
      body: { defaultTenant: tenant.id },
    })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('defaultTenant')
  })

  it('takes null as empty when creating users and tenant users', async () => {
    const created = await t.request('POST', '/v1/users', {
      token: admin,
      body: {
        email: `null.${Date.now()}@example.test`,
        roleId: ROLE_IDS.platformUser,
        firstName: null,
        lastName: null,
        externalId: null,
        personalTelephone: null,
      },
    })
    expect(created.status).toBe(201)
    expect(created.body.result).toMatchObject({ firstName: '', lastName: '', externalId: '' })
    const member = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin,
      body: {
        email: created.body.result.email,
        roleId: ROLE_IDS.agent,
        status: 'accepted',
        workStationId: null,
        noPassword: null,
      },
    })
    expect(member.status).toBe(201)
    expect(member.body.result.workStationId).toBe('')
    const update = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${created.body.result.id}`, {
      token: admin,
      body: { workStationId: null, supervisorId: null, defaultIdentityProvider: null },
    })
    expect(update.status).toBe(200)
  })
})

describe('tenant users as the UIs read them', () => {
  it('carry externalId, platformStatus and roleName, and ?status= filters', async () => {
    const local = await createTenantAsAdmin(t)
    const accepted = await insertUser(t.database.handle.db)
    const invited = await insertUser(t.database.handle.db, { status: 'disabled' })
    await t.database.handle.db
      .updateTable('users')
      .set({ external_id: 'crm-42' })
      .where('id', '=', accepted.id)
      .execute()
    await insertMembership(t.database.handle.db, {
      tenantId: local.id,
      userId: accepted.id,
      roleId: ROLE_IDS.supervisor,
    })
    await insertMembership(t.database.handle.db, {
      tenantId: local.id,
      userId: invited.id,
      roleId: ROLE_IDS.agent,
      status: 'invited',
    })
    const one = await t.request('GET', `/v1/tenants/${local.id}/users/${accepted.id}`, { token: admin })
    expect(one.body.result).toMatchObject({
      externalId: 'crm-42',
      platformStatus: 'enabled',
      roleName: 'Supervisor',
    })

    const onlyInvited = await t.request('GET', `/v1/tenants/${local.id}/users?status=invited`, {
      token: admin,
    })
    expect(onlyInvited.status).toBe(200)
    expect(onlyInvited.body.result.map((u: { userId: string }) => u.userId)).toEqual([invited.id])
    expect(onlyInvited.body.result[0]).toMatchObject({
      platformStatus: 'disabled',
      roleName: 'Agent',
      externalId: '',
    })
    const all = await t.request('GET', `/v1/tenants/${local.id}/users`, { token: admin })
    expect(all.body.result).toHaveLength(2)
    const bad = await t.request('GET', `/v1/tenants/${local.id}/users?status=gone`, { token: admin })
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('status')
  })
})

describe('tenants', () => {
  it('creates a root tenant with the platform id as parentId, and takes a null description', async () => {
    const platformId = (await t.request('GET', `/v1/tenants/${tenant.id}`, { token: admin })).body.result
      .parent.id
    const root = await t.request('POST', '/v1/tenants', {
      token: admin,
      body: { name: uniqueName('Root'), regionId: REGION_ID, parentId: platformId, description: null },
    })
    expect(root.status, JSON.stringify(root.body)).toBe(201)
    expect(root.body.result).toMatchObject({ parentId: platformId, parentIds: [platformId], description: '' })
    const cleared = await t.request('PUT', `/v1/tenants/${root.body.result.id}`, {
      token: admin,
      body: { description: null, outboundIntegrationId: null },
    })
    expect(cleared.status).toBe(200)

    // Only the platform's MANAGE_TENANT makes a root tenant, whatever the parentId spelling.
    const member = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: member.id,
      roleId: ROLE_IDS.administrator,
    })
    t.ctx.access.invalidate()
    const tenantAdmin = await t.tokenFor(member.email, member.password)
    const refused = await t.request('POST', '/v1/tenants', {
      token: tenantAdmin,
      body: { name: uniqueName('Root'), regionId: REGION_ID, parentId: platformId },
    })
    expect(refused.status).toBe(403)
  })
})
