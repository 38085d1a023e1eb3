import { afterEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, memberWithToken } from '../../helpers/fixtures.js'
import { giveFactor, tokenWonWith } from '../../helpers/mfa-policy.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * A tenant's second-factor policy, down the tree (docs/security.md, "Policy"): its fields, the effective
 * policy, and a password-only member refused past their deadline — 403 mfa_required, as sso_required.
 */
const t = useTestApp()
const DAY = 86_400_000

// Each test may move the clock days ahead; the next starts from the wall clock again.
afterEach(() => t.clock.set(new Date()))

async function put(tenantId: string, body: Record<string, unknown>, token?: string) {
  return t.request('PUT', `/v1/tenants/${tenantId}`, { token: token ?? (await t.adminToken()), body })
}

const tenantOf = async (tenantId: string, token: string) =>
  t.request('GET', `/v1/tenants/${tenantId}`, { token })

const loginEntry = async (token: string, tenantId: string) =>
  (await t.request('POST', '/v1/login', { token })).body.result.tenants.find(
    (x: any) => x.tenantId === tenantId,
  )

describe('the policy fields', () => {
  it('default to optional, 7 grace days and trust in the identity provider, on create, GET and list', async () => {
    const tenant = await createTenantAsAdmin(t)
    expect(tenant).toMatchObject({ mfaPolicy: 'optional', mfaGraceDays: 7, mfaAcceptIdp: 'always' })
    expect(tenant.mfaPolicyEffective).toEqual({
      policy: 'optional',
      tenantId: tenant.id,
      since: null,
      graceDays: 7,
      acceptIdp: 'always',
    })
    const token = await t.adminToken()
    const read = await tenantOf(tenant.id, token)
    expect(read.body.result).toMatchObject({ mfaPolicy: 'optional', mfaGraceDays: 7, mfaAcceptIdp: 'always' })
    const list = await t.request('GET', `/v1/tenants?parentId=${t.ctx.platform.id}`, { token })
    const listed = list.body.result.find((x: any) => x.id === tenant.id)
    expect(listed).toMatchObject({ mfaPolicy: 'optional', mfaGraceDays: 7, mfaAcceptIdp: 'always' })
    expect(listed.mfaPolicyEffective).toBeUndefined()
  })

  it('are set on create and by PUT; a PUT leaving them out keeps them; the change is in tenant.updated', async () => {
    const tenant = await createTenantAsAdmin(t, {
      mfaPolicy: 'required',
      mfaGraceDays: 3,
      mfaAcceptIdp: 'asserted',
    })
    expect(tenant.mfaPolicyEffective).toMatchObject({ policy: 'required', tenantId: tenant.id, graceDays: 3 })
    expect((tenant.mfaPolicyEffective as any).since).toBe(t.clock.now().toISOString())
    const renamed = await put(tenant.id, { description: 'Night shift' })
    expect(renamed.body.result).toMatchObject({
      mfaPolicy: 'required',
      mfaGraceDays: 3,
      mfaAcceptIdp: 'asserted',
    })
    const changed = await put(tenant.id, { mfaPolicy: 'optional', mfaGraceDays: 0, mfaAcceptIdp: 'always' })
    expect(changed.status).toBe(200)
    expect(changed.body.result.mfaPolicyEffective).toMatchObject({ policy: 'optional', since: null })
    const events = await t.request('GET', `/v1/audit-events?action=tenant.updated&targetId=${tenant.id}`, {
      token: await t.adminToken(),
    })
    expect(events.body.result[0].changes).toMatchObject({
      mfaPolicy: ['required', 'optional'],
      mfaGraceDays: [3, 0],
      mfaAcceptIdp: ['asserted', 'always'],
    })
  })

  it('refuse a bad value with 400 naming the field', async () => {
    const tenant = await createTenantAsAdmin(t)
    for (const [field, value] of [
      ['mfaPolicy', 'sometimes'],
      ['mfaGraceDays', 91],
      ['mfaGraceDays', -1],
      ['mfaGraceDays', 1.5],
      ['mfaAcceptIdp', 'never'],
    ] as const) {
      const response = await put(tenant.id, { [field]: value })
      expect(response.status, `${field}=${value}`).toBe(400)
      expect(Object.keys(response.body.error.attribute)).toContain(field)
    }
    const created = await t.request('POST', '/v1/tenants', {
      token: await t.adminToken(),
      body: { name: `x ${Date.now()}`, regionId: tenant.regionId, mfaGraceDays: 100 },
    })
    expect(created.status).toBe(400)
    expect(created.body.error.attribute).toHaveProperty('mfaGraceDays')
  })
})

describe('changing the policy is a step-up operation', () => {
  it('asks an administrator with a factor older than 10 minutes again (401), for mfaPolicy and mfaAcceptIdp only', async () => {
    const tenant = await createTenantAsAdmin(t)
    const admin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    await giveFactor(t.ctx.db, admin.id)
    const token = await tokenWonWith(t, admin.id, ['pwd', 'otp'])
    t.clock.advance(11 * 60_000)
    for (const body of [{ mfaPolicy: 'required' }, { mfaAcceptIdp: 'asserted' }]) {
      const refused = await put(tenant.id, body, token)
      expect(refused.status).toBe(401)
      expect(refused.body.error.reason).toBe('reauthentication_required')
      expect(refused.body.error.mfa.token).toEqual(expect.any(String))
    }
    // Other fields, and the policy's own values sent back unchanged, need no step-up.
    const same = await put(
      tenant.id,
      { description: 'Day shift', mfaPolicy: 'optional', mfaGraceDays: 14 },
      token,
    )
    expect(same.status).toBe(200)
    expect(same.body.result).toMatchObject({ mfaPolicy: 'optional', mfaGraceDays: 14 })
    const fresh = await tokenWonWith(t, admin.id, ['pwd', 'otp'])
    expect((await put(tenant.id, { mfaPolicy: 'required' }, fresh)).status).toBe(200)
  })
})

describe('a password-only member of a tenant that requires a second factor', () => {
  it('acts before the deadline, and /v1/login says until when; past it: 403 mfa_required everywhere there', async () => {
    const tenant = await createTenantAsAdmin(t)
    const member = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    // The policy is turned on after the member joined: the grace runs from the policy.
    t.clock.advance(1_000)
    const turnedOn = await put(tenant.id, { mfaPolicy: 'required' })
    expect(turnedOn.status).toBe(200)
    const since = turnedOn.body.result.mfaPolicyEffective.since
    expect(since).toBe(t.clock.now().toISOString())
    const deadline = new Date(t.clock.now().getTime() + 7 * DAY).toISOString()

    t.clock.advance(7 * DAY - 60_000)
    const before = await t.tokenFor(member.email, member.password)
    expect((await tenantOf(tenant.id, before)).status).toBe(200)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token: before })).status).toBe(200)
    expect(await loginEntry(before, tenant.id)).toMatchObject({ mfaRequired: true, mfaDeadline: deadline })

    t.clock.advance(2 * 60_000)
    const after = await t.tokenFor(member.email, member.password)
    const refused = await tenantOf(tenant.id, after)
    expect(refused.status).toBe(403)
    expect(refused.body.error.reason).toBe('mfa_required')
    const members = await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token: after })
    expect(members.status).toBe(403)
    expect(members.body.error.reason).toBe('mfa_required')
    expect(await loginEntry(after, tenant.id)).toMatchObject({
      mfaRequired: true,
      mfaDeadline: deadline,
      tenantPermissions: [],
    })
  })

  it('acts past the deadline once its sign-in was won with a second factor', async () => {
    const tenant = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 0 })
    const member = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    t.clock.advance(DAY)
    await giveFactor(t.ctx.db, member.id)
    const token = await tokenWonWith(t, member.id, ['pwd', 'otp'])
    expect((await tenantOf(tenant.id, token)).status).toBe(200)
    expect(await loginEntry(token, tenant.id)).toMatchObject({ mfaRequired: true, mfaDeadline: null })
  })

  it('gets its grace from its acceptance when it joins after the policy was turned on', async () => {
    const tenant = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 2 })
    t.clock.advance(5 * DAY)
    const newcomer = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    // The fixture writes the membership at the wall clock's time; the grace runs from there.
    const login = await loginEntry(newcomer.token, tenant.id)
    expect(new Date(login.mfaDeadline).getTime()).toBeGreaterThan(Date.now() + 2 * DAY - 60_000)
    t.clock.set(new Date(Date.now() + DAY))
    expect((await tenantOf(tenant.id, await t.tokenFor(newcomer.email, newcomer.password))).status).toBe(200)
    t.clock.set(new Date(Date.now() + 2 * DAY + 60_000))
    expect((await tenantOf(tenant.id, await t.tokenFor(newcomer.email, newcomer.password))).status).toBe(403)
  })

  it('acts again once the policy is turned off', async () => {
    const tenant = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 0 })
    const member = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    t.clock.advance(60_000)
    const token = await t.tokenFor(member.email, member.password)
    expect((await tenantOf(tenant.id, token)).status).toBe(403)
    expect((await put(tenant.id, { mfaPolicy: 'optional' })).status).toBe(200)
    expect((await tenantOf(tenant.id, token)).status).toBe(200)
  })
})

describe('no way around the policy', () => {
  it('a refused member reads nothing of the tenant through the platform’s user routes either', async () => {
    const tenant = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 1 })
    const supervisor = await memberWithToken(t, tenant.id, ROLE_IDS.supervisor)
    const colleague = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const before = await t.request('GET', `/v1/users/${colleague.id}`, { token: supervisor.token })
    expect(before.status).toBe(200)
    t.clock.advance(DAY + 60_000)
    const token = await t.tokenFor(supervisor.email, supervisor.password)
    expect((await t.request('GET', `/v1/users/${colleague.id}`, { token })).status).toBe(404)
    const list = await t.request('GET', '/v1/users', { token })
    expect(list.body.result.map((u: any) => u.id)).not.toContain(colleague.id)
    const change = await t.request('PUT', `/v1/users/${colleague.id}`, {
      token,
      body: { firstName: 'Mallory' },
    })
    expect(change.status).toBe(404)
  })
})

describe('down the tree', () => {
  it('a sub-tenant "loosening" its parent’s policy gains nothing: its members are refused as the parent’s', async () => {
    const parent = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 1 })
    const child = await createTenantAsAdmin(t, {
      parentId: parent.id,
      mfaPolicy: 'optional',
      mfaGraceDays: 90,
    })
    const admin = await memberWithToken(t, child.id, ROLE_IDS.administrator)
    // The child's own administrator sets optional again: stored, but the parent still binds.
    const loosened = await put(child.id, { mfaPolicy: 'optional', mfaGraceDays: 90 }, admin.token)
    expect(loosened.status).toBe(200)
    expect(loosened.body.result.mfaPolicy).toBe('optional')
    expect(loosened.body.result.mfaPolicyEffective).toMatchObject({
      policy: 'required',
      tenantId: parent.id,
      graceDays: 1,
    })
    // A grandchild is bound as well.
    const grandchild = await createTenantAsAdmin(t, { parentId: child.id })
    expect(
      (await tenantOf(grandchild.id, await t.adminToken())).body.result.mfaPolicyEffective,
    ).toMatchObject({
      policy: 'required',
      tenantId: parent.id,
    })
    t.clock.advance(DAY + 60_000)
    const token = await t.tokenFor(admin.email, admin.password)
    const refused = await tenantOf(child.id, token)
    expect(refused.status).toBe(403)
    expect(refused.body.error.reason).toBe('mfa_required')
  })

  it('a sub-tenant tightens: required below an optional parent binds the sub-tenant, not the parent', async () => {
    const parent = await createTenantAsAdmin(t)
    const child = await createTenantAsAdmin(t, {
      parentId: parent.id,
      mfaPolicy: 'required',
      mfaGraceDays: 0,
    })
    const member = await memberWithToken(t, parent.id, ROLE_IDS.administrator)
    t.clock.advance(60_000)
    const token = await t.tokenFor(member.email, member.password)
    expect((await tenantOf(parent.id, token)).status).toBe(200)
    expect((await tenantOf(child.id, token)).status).toBe(403)
  })
})
