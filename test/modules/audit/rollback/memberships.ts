import { ROLE_IDS } from '../../../../src/access/permissions.js'
import { insertMembership, insertUser, uniqueEmail } from '../../../helpers/fixtures.js'
import { as, PASSWORD, type Rollback, type WriteAction } from './harness.js'

/** The audit-rollback scenes of memberships (see ../audit-rollback.test.ts). */
export function membershipScenes(r: Rollback): WriteAction[] {
  const { t, api, newTenant, newUser, userExists, membership, invite, form } = r
  return [
    {
      name: 'POST /v1/tenants/{t}/users',
      action: 'membership.invited',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const user = await newUser()
        return {
          write: () =>
            api('POST', `/v1/tenants/${tenantId}/users`, {
              token: r.admin,
              body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
            }),
          stored: async () => (await membership(tenantId, user.id)) !== undefined,
        }
      },
    },
    {
      name: 'POST /v1/tenants/{t}/users with platformRoleId (a new user too)',
      action: 'membership.created',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const email = uniqueEmail('rb-new-member')
        return {
          write: () =>
            api('POST', `/v1/tenants/${tenantId}/users`, {
              token: r.admin,
              body: { email, roleId: ROLE_IDS.agent, platformRoleId: ROLE_IDS.platformUser },
            }),
          stored: () => userExists(email),
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{t}/users/{u}',
      action: 'membership.role_changed',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const user = await newUser()
        await insertMembership(t.ctx.db, {
          tenantId,
          userId: user.id,
          roleId: ROLE_IDS.agent,
          status: 'pending',
        })
        return {
          write: () =>
            api('PUT', `/v1/tenants/${tenantId}/users/${user.id}`, {
              token: r.admin,
              body: { roleId: ROLE_IDS.supervisor },
            }),
          stored: async () => (await membership(tenantId, user.id))?.roleId === ROLE_IDS.supervisor,
        }
      },
    },
    {
      name: 'DELETE /v1/tenants/{t}/users/{u}',
      action: 'membership.removed',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const user = await newUser()
        await insertMembership(t.ctx.db, {
          tenantId,
          userId: user.id,
          roleId: ROLE_IDS.agent,
          status: 'pending',
        })
        return {
          write: () => api('DELETE', `/v1/tenants/${tenantId}/users/${user.id}`, as(r.admin)),
          stored: async () => (await membership(tenantId, user.id)) === undefined,
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{t}/users/{self} {"status":"accepted"} with its own login',
      action: 'membership.status_changed',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const user = await insertUser(t.ctx.db)
        await invite(tenantId, user.email)
        const token = await t.tokenFor(user.email, user.password)
        return {
          write: () =>
            api('PUT', `/v1/tenants/${tenantId}/users/${user.id}`, { token, body: { status: 'accepted' } }),
          stored: async () => (await membership(tenantId, user.id))?.status === 'accepted',
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{t}/users/{u} {"status":"accepted"} with an invitation token',
      action: 'membership.status_changed',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const user = await newUser()
        const token = await invite(tenantId, user.email)
        return {
          write: () =>
            api('PUT', `/v1/tenants/${tenantId}/users/${user.id}`, {
              authorization: `Token ${token}`,
              body: { status: 'accepted' },
            }),
          stored: async () => (await membership(tenantId, user.id))?.status === 'accepted',
        }
      },
    },
    {
      name: 'POST /v1/invitations/{token}/accept (with a first password)',
      action: 'membership.status_changed',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const user = await newUser()
        const token = await invite(tenantId, user.email)
        return {
          write: () => api('POST', `/v1/invitations/${token}/accept`, { body: { password: PASSWORD } }),
          stored: async () => (await membership(tenantId, user.id))?.status === 'accepted',
        }
      },
    },
    {
      name: 'POST /invitations/accept (the acceptance page)',
      action: 'membership.status_changed',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const user = await newUser()
        const token = await invite(tenantId, user.email)
        return {
          write: () =>
            api(
              'POST',
              '/invitations/accept',
              form({ token, password: PASSWORD, passwordConfirmation: PASSWORD }),
            ),
          stored: async () => (await membership(tenantId, user.id))?.status === 'accepted',
        }
      },
    },
  ]
}
