import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { randomSecret, sha256 } from '../../../src/crypto/tokens.js'
import { createTenantAsAdmin, memberWithToken, uniqueEmail } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * The narrow credential and the self-service paths judge a body by what it changes (docs/api.md#passwords-and-the-existing-clients-flows): null
 * means empty, and a field repeating its stored value is no change. The older admin UI sends whole
 * records back — with `externalId: null` — and must be able to onboard a person with the invitation token.
 */
let t: TestApp
let admin: string
let tenant: { id: string; name: string }

beforeAll(async () => {
  t = await createTestApp()
  admin = await t.adminToken()
  tenant = await createTenantAsAdmin(t)
})
afterAll(async () => {
  await t.close()
})

/** A new user (no password) invited to the tenant, with a known invitation token. */
async function invitedUser(): Promise<{ id: string; token: string }> {
  const email = uniqueEmail('whole-body')
  const created = await t.request('POST', '/v1/users', {
    token: admin,
    body: { email, roleId: ROLE_IDS.platformUser },
  })
  expect(created.status).toBe(201)
  const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
    token: admin,
    body: { email, roleId: ROLE_IDS.agent, status: 'invited' },
  })
  expect(invited.status).toBe(201)
  // The token lives only in the e-mail: give the invitation one this test knows.
  const token = randomSecret()
  await t.database.handle.db
    .updateTable('tenant_users')
    .set({ invitation_token_hash: sha256(token) })
    .where('tenant_id', '=', tenant.id)
    .where('user_id', '=', created.body.result.id)
    .execute()
  return { id: created.body.result.id, token }
}

describe('the invitation token judges a body by what it changes', () => {
  it('takes the older admin UI’s exact onboarding body, externalId null included', async () => {
    const user = await invitedUser()
    const response = await t.request('PUT', `/v1/users/${user.id}`, {
      authorization: `Token ${user.token}`,
      body: { firstName: 'Bob', lastName: 'Jones', externalId: null, password: 'a long enough password' },
    })
    expect(response.status).toBe(200)
    expect(response.body.result).toMatchObject({
      firstName: 'Bob',
      lastName: 'Jones',
      externalId: '',
      hasPassword: true,
    })
  })

  it('takes the whole record sent back unchanged, and still refuses a field that differs', async () => {
    const user = await invitedUser()
    const auth = `Token ${user.token}`
    const read = await t.request('GET', `/v1/users/${user.id}`, { authorization: auth })
    expect(read.status).toBe(200)
    const whole = { ...read.body.result, firstName: 'Whole', lastName: 'Record' }
    const saved = await t.request('PUT', `/v1/users/${user.id}`, { authorization: auth, body: whole })
    expect(saved.status).toBe(200)
    expect(saved.body.result).toMatchObject({ firstName: 'Whole', lastName: 'Record' })

    for (const change of [
      { externalId: 'crm-1' },
      { status: 'disabled' },
      { roleId: ROLE_IDS.platformAdministrator },
    ]) {
      const refused = await t.request('PUT', `/v1/users/${user.id}`, {
        authorization: auth,
        body: { firstName: 'Bob', ...change },
      })
      expect(refused.status, JSON.stringify(change)).toBe(401)
    }
    const after = await t.request('GET', `/v1/users/${user.id}`, { authorization: auth })
    expect(after.body.result).toMatchObject({
      externalId: '',
      status: 'enabled',
      roleId: ROLE_IDS.platformUser,
    })
  })

  it('accepts with the membership record sent back whole beside "status": "accepted"', async () => {
    const user = await invitedUser()
    const read = await t.request('GET', `/v1/tenants/${tenant.id}/users/${user.id}`, { token: admin })
    expect(read.status).toBe(200)
    const { roleId, noPassword, defaultIdentityProvider, extensions, supervisorId } = read.body.result
    const accepted = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      authorization: `Token ${user.token}`,
      body: {
        ...read.body.result,
        status: 'accepted',
        roleId,
        noPassword,
        defaultIdentityProvider,
        extensions,
        supervisorId,
        workStationId: null,
        activeExtension: null,
      },
    })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result.status).toBe('accepted')
  })

  it('still refuses a membership body that changes more than the status', async () => {
    const user = await invitedUser()
    const refused = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      authorization: `Token ${user.token}`,
      body: { status: 'accepted', roleId: ROLE_IDS.administrator },
    })
    expect(refused.status).toBe(401)
    const read = await t.request('GET', `/v1/tenants/${tenant.id}/users/${user.id}`, { token: admin })
    expect(read.body.result).toMatchObject({ status: 'invited', roleId: ROLE_IDS.agent })
  })
})

describe('an existing user accepting its own invitation sends its record back', () => {
  it('accepts with unchanged fields beside the status; a changed role takes the ordinary rules', async () => {
    const other = await createTenantAsAdmin(t)
    const member = await memberWithToken(t, other.id, ROLE_IDS.agent)
    const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin,
      body: { email: member.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(invited.status).toBe(201)
    const promote = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${member.id}`, {
      token: member.token,
      body: { status: 'accepted', roleId: ROLE_IDS.administrator },
    })
    expect(promote.status).toBe(404)
    const accepted = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${member.id}`, {
      token: member.token,
      body: { status: 'accepted', roleId: ROLE_IDS.agent, workStationId: null, noPassword: null },
    })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result).toMatchObject({ status: 'accepted', roleId: ROLE_IDS.agent })
  })
})
