import { afterEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { giveFactor } from '../../helpers/mfa-policy.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Who has no factor (docs/security.md, "Policy"): member records say `mfa` and, under a policy requiring
 * one, the deadline of a member without; `?mfa=false` lists the members a policy would refuse.
 */
const t = useTestApp()
const DAY = 86_400_000

afterEach(() => t.clock.set(new Date()))

async function scene(policy: Record<string, unknown>) {
  const tenant = await createTenantAsAdmin(t, policy)
  const db = t.database.handle.db
  const withFactor = await insertUser(db)
  const without = await insertUser(db)
  const invited = await insertUser(db)
  await giveFactor(db, withFactor.id)
  await insertMembership(db, { tenantId: tenant.id, userId: withFactor.id, roleId: ROLE_IDS.agent })
  await insertMembership(db, { tenantId: tenant.id, userId: without.id, roleId: ROLE_IDS.agent })
  await insertMembership(db, {
    tenantId: tenant.id,
    userId: invited.id,
    roleId: ROLE_IDS.agent,
    status: 'invited',
  })
  return { tenant, withFactor, without, invited }
}

const members = async (tenantId: string, query = '') =>
  t.request('GET', `/v1/tenants/${tenantId}/users${query}`, { token: await t.adminToken() })

describe('members and their second factors', () => {
  it('say `mfa` on every record; no deadline while the tenant does not require a factor', async () => {
    const { tenant, withFactor, without } = await scene({})
    const list = (await members(tenant.id)).body.result
    const admin = list.find((m: any) => m.userId === withFactor.id)
    expect(admin).toMatchObject({ mfa: true, mfaDeadline: null })
    expect(list.find((m: any) => m.userId === without.id)).toMatchObject({ mfa: false, mfaDeadline: null })
    const one = await t.request('GET', `/v1/tenants/${tenant.id}/users/${withFactor.id}`, {
      token: await t.adminToken(),
    })
    expect(one.body.result).toMatchObject({ mfa: true, mfaDeadline: null })
  })

  it('?mfa=false lists who would be refused, with their deadlines; ?mfa=true the others', async () => {
    t.clock.advance(1_000)
    const { tenant, withFactor, without, invited } = await scene({ mfaPolicy: 'required', mfaGraceDays: 3 })
    const since = t.clock.now().getTime()
    const lacking = (await members(tenant.id, '?mfa=false')).body.result
    expect(lacking.map((m: any) => m.userId).sort()).toEqual([without.id, invited.id].sort())
    const deadline = new Date(lacking.find((m: any) => m.userId === without.id).mfaDeadline).getTime()
    // The later of the policy's start and the membership's acceptance (the fixture's wall-clock time).
    expect(deadline).toBeGreaterThanOrEqual(since + 3 * DAY)
    expect(deadline).toBeLessThan(Date.now() + 3 * DAY + 1_000)
    // An invitation's grace starts at its acceptance: no deadline yet.
    expect(lacking.find((m: any) => m.userId === invited.id).mfaDeadline).toBeNull()
    const having = (await members(tenant.id, '?mfa=true')).body.result
    expect(having.map((m: any) => m.userId)).toEqual([withFactor.id])
    expect(having[0].mfaDeadline).toBeNull()
    const paged = await members(tenant.id, '?mfa=false&limit=1')
    expect(paged.body.result).toHaveLength(1)
    expect(paged.body.nextCursor).toEqual(expect.any(String))
  })

  it('gives a sub-tenant’s members the deadline of the ancestor whose policy binds them', async () => {
    t.clock.advance(1_000)
    const parent = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 1 })
    const child = await createTenantAsAdmin(t, { parentId: parent.id, mfaGraceDays: 60 })
    const person = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: child.id,
      userId: person.id,
      roleId: ROLE_IDS.agent,
    })
    const [record] = (await members(child.id, '?mfa=false')).body.result
    expect(new Date(record.mfaDeadline).getTime()).toBeLessThan(Date.now() + DAY + 1_000)
  })

  it('says mfa of a member just added through the API, and starts an invitee’s grace at acceptance', async () => {
    const tenant = await createTenantAsAdmin(t, { mfaPolicy: 'required', mfaGraceDays: 2 })
    const token = await t.adminToken()
    const withFactor = await insertUser(t.database.handle.db)
    await giveFactor(t.database.handle.db, withFactor.id)
    const added = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token,
      body: { email: withFactor.email, roleId: ROLE_IDS.agent, status: 'accepted' },
    })
    expect(added.status).toBe(201)
    expect(added.body.result).toMatchObject({ mfa: true, mfaDeadline: null })

    const invitee = await insertUser(t.database.handle.db)
    const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token,
      body: { email: invitee.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(invited.body.result).toMatchObject({ mfa: false, mfaDeadline: null })
    t.clock.advance(20 * 3_600_000)
    const accepted = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${invitee.id}`, {
      token: await t.tokenFor(invitee.email, invitee.password),
      body: { status: 'accepted' },
    })
    expect(accepted.status).toBe(200)
    // Accepted 20 hours after the policy: two days from the acceptance, not from the policy.
    const deadline = new Date(t.clock.now().getTime() + 2 * DAY).toISOString()
    expect(accepted.body.result).toMatchObject({ mfa: false, mfaDeadline: deadline })
    const read = await t.request('GET', `/v1/tenants/${tenant.id}/users/${invitee.id}`, {
      token: await t.tokenFor(invitee.email, invitee.password),
    })
    expect(read.body.result.mfaDeadline).toBe(deadline)
  })

  it('refuses ?mfa= that is no boolean with 400 naming mfa', async () => {
    const tenant = await createTenantAsAdmin(t)
    const response = await members(tenant.id, '?mfa=perhaps')
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('mfa')
  })
})
