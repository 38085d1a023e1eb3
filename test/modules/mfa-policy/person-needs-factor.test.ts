import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { personNeedsSecondFactor } from '../../../src/modules/mfa-policy/mfa-policy.service.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * personNeedsSecondFactor (docs/security.md, "Policy"): whether any policy requires a factor of a person —
 * what Basic's refusal and the 409 on removing a last factor are decided by.
 */
const t = useTestApp()

const needs = (userId: string) => personNeedsSecondFactor(t.ctx.db, userId)

async function setPolicy(tenantId: string, mfaPolicy: 'optional' | 'required') {
  const response = await t.request('PUT', `/v1/tenants/${tenantId}`, {
    token: await t.adminToken(),
    body: { mfaPolicy },
  })
  expect(response.status).toBe(200)
}

describe('personNeedsSecondFactor', () => {
  it('is false for a person no policy binds, true once a tenant they belong to requires a factor', async () => {
    const tenant = await createTenantAsAdmin(t)
    const person = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: person.id,
      roleId: ROLE_IDS.agent,
    })
    expect(await needs(person.id)).toBe(false)
    await setPolicy(tenant.id, 'required')
    expect(await needs(person.id)).toBe(true)
    await setPolicy(tenant.id, 'optional')
    expect(await needs(person.id)).toBe(false)
  })

  it('follows the policy down the tree: a member of a sub-tenant of a requiring tenant needs one', async () => {
    const parent = await createTenantAsAdmin(t, { mfaPolicy: 'required' })
    const child = await createTenantAsAdmin(t, { parentId: parent.id })
    const person = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: child.id,
      userId: person.id,
      roleId: ROLE_IDS.agent,
    })
    expect(await needs(person.id)).toBe(true)
  })

  it('counts accepted memberships only: an invitation or a disabled membership binds nobody yet', async () => {
    const tenant = await createTenantAsAdmin(t, { mfaPolicy: 'required' })
    const invited = await insertUser(t.database.handle.db)
    const disabled = await insertUser(t.database.handle.db)
    const db = t.database.handle.db
    await insertMembership(db, {
      tenantId: tenant.id,
      userId: invited.id,
      roleId: ROLE_IDS.agent,
      status: 'invited',
    })
    await insertMembership(db, {
      tenantId: tenant.id,
      userId: disabled.id,
      roleId: ROLE_IDS.agent,
      status: 'disabled',
    })
    expect(await needs(invited.id)).toBe(false)
    expect(await needs(disabled.id)).toBe(false)
  })

  it('asks it of platform roles with permissions while the platform requires it, not of a Platform User', async () => {
    const admin = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const plain = await insertUser(t.database.handle.db)
    expect(await needs(admin.id)).toBe(false)
    await t.ctx.db.updateTable('platform').set({ mfa_for_platform_roles: 'required' }).execute()
    try {
      expect(await needs(admin.id)).toBe(true)
      expect(await needs(plain.id)).toBe(false)
    } finally {
      await t.ctx.db.updateTable('platform').set({ mfa_for_platform_roles: 'optional' }).execute()
    }
  })
})
