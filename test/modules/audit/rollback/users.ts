import { ROLE_IDS } from '../../../../src/access/permissions.js'
import { REGION_ID, uniqueEmail, uniqueName } from '../../../helpers/fixtures.js'
import { as, PASSWORD, type Rollback, type WriteAction } from './harness.js'

/** The audit-rollback scenes of users (see ../audit-rollback.test.ts). */
export function tenantAndUserScenes(r: Rollback): WriteAction[] {
  const { t, api, get, newTenant, newUser, userExists, invite, resetToken, form, tenantFieldIs } = r
  return [
    {
      name: 'POST /v1/tenants',
      action: 'tenant.created',
      table: 'tenants',
      async arrange() {
        const name = uniqueName('Rollback')
        return {
          write: () => api('POST', '/v1/tenants', { token: r.admin, body: { name, regionId: REGION_ID } }),
          stored: async () => ((await get('/v1/tenants')).body.result as any[]).some((x) => x.name === name),
        }
      },
    },
    {
      name: 'PUT /v1/tenants/{id}',
      action: 'tenant.updated',
      table: 'tenants',
      async arrange() {
        const tenantId = await newTenant()
        const description = uniqueName('Night shift')
        return {
          write: () => api('PUT', `/v1/tenants/${tenantId}`, { token: r.admin, body: { description } }),
          stored: () => tenantFieldIs(tenantId, 'description', description),
        }
      },
    },
    {
      name: 'POST /v1/users',
      action: 'user.created',
      table: 'users',
      async arrange() {
        const email = uniqueEmail('rb-create')
        return {
          write: () =>
            api('POST', '/v1/users', { token: r.admin, body: { email, roleId: ROLE_IDS.platformUser } }),
          stored: () => userExists(email),
        }
      },
    },
    {
      name: 'POST /v1/users with a JSON array',
      action: 'user.created',
      table: 'users',
      async arrange() {
        const emails = [uniqueEmail('rb-array'), uniqueEmail('rb-array')]
        return {
          write: () =>
            api('POST', '/v1/users', {
              token: r.admin,
              body: emails.map((email) => ({ email, roleId: ROLE_IDS.platformUser })),
            }),
          stored: async () => (await userExists(emails[0]!)) || (await userExists(emails[1]!)),
        }
      },
    },
    {
      name: 'POST /v1/users with NDJSON',
      action: 'user.created',
      table: 'users',
      async arrange() {
        const emails = [uniqueEmail('rb-ndjson'), uniqueEmail('rb-ndjson')]
        return {
          async write() {
            const response = await t.app.inject({
              method: 'POST',
              url: '/v1/users',
              headers: { authorization: `Bearer ${r.admin}`, 'content-type': 'application/x-ndjson' },
              payload: emails
                .map((email) => `${JSON.stringify({ email, roleId: ROLE_IDS.platformUser })}\n`)
                .join(''),
            })
            // The 200 goes out before the rows are written: a load that stops says why on its last line.
            const last = JSON.parse(response.body.trim().split('\n').pop()!)
            return last.error
              ? { status: last.error.code, reason: last.error.reason }
              : { status: response.statusCode }
          },
          stored: async () => (await userExists(emails[0]!)) || (await userExists(emails[1]!)),
        }
      },
    },
    {
      name: 'POST /v1/users with rows naming a tenant (membership, invitation mail)',
      action: 'membership.invited',
      table: 'tenant_users',
      async arrange() {
        const tenantId = await newTenant()
        const emails = [uniqueEmail('rb-member'), uniqueEmail('rb-member')]
        return {
          write: () =>
            api('POST', '/v1/users', {
              token: r.admin,
              body: emails.map((email) => ({
                email,
                roleId: ROLE_IDS.platformUser,
                tenantId,
                tenantRoleId: ROLE_IDS.agent,
                tenantStatus: 'invited',
              })),
            }),
          stored: async () => (await userExists(emails[0]!)) || (await userExists(emails[1]!)),
        }
      },
    },
    {
      name: 'PUT /v1/users/{id}',
      action: 'user.updated',
      table: 'users',
      async arrange() {
        const user = await newUser()
        const lastName = uniqueName('Lovelace')
        return {
          write: () => api('PUT', `/v1/users/${user.id}`, { token: r.admin, body: { lastName } }),
          stored: async () => (await get(`/v1/users/${user.id}`)).body.result.lastName === lastName,
        }
      },
    },
    {
      name: 'PUT /v1/users/{id} {"resetPassword": true}',
      action: 'user.password_reset_requested',
      table: 'users',
      async arrange() {
        const user = await newUser()
        return {
          write: () => api('PUT', `/v1/users/${user.id}`, { token: r.admin, body: { resetPassword: true } }),
          stored: async () =>
            (await get(`/v1/users/${user.id}`)).body.result.resetPasswordExpiryDate !== null,
        }
      },
    },
    {
      name: 'PUT /v1/request-password-reset',
      action: 'user.password_reset_requested',
      table: 'users',
      async arrange() {
        const user = await newUser()
        return {
          write: () => api('PUT', '/v1/request-password-reset', { body: { email: user.email } }),
          stored: async () =>
            (await get(`/v1/users/${user.id}`)).body.result.resetPasswordExpiryDate !== null,
        }
      },
    },
    {
      name: 'PUT /v1/users/{id} with a reset token',
      action: 'user.password_changed',
      table: 'users',
      async arrange() {
        const user = await newUser()
        const token = await resetToken(user.id)
        return {
          write: () =>
            api('PUT', `/v1/users/${user.id}`, {
              authorization: `Token ${token}`,
              body: { password: PASSWORD },
            }),
          stored: async () => (await get(`/v1/users/${user.id}`)).body.result.hasPassword === true,
        }
      },
    },
    {
      name: 'POST /password-reset (the reset page)',
      action: 'user.password_changed',
      table: 'users',
      async arrange() {
        const user = await newUser()
        const token = await resetToken(user.id)
        return {
          write: () =>
            api(
              'POST',
              '/password-reset',
              form({ token, password: PASSWORD, passwordConfirmation: PASSWORD }),
            ),
          stored: async () => (await get(`/v1/users/${user.id}`)).body.result.hasPassword === true,
        }
      },
    },
    {
      name: 'PUT /v1/users/{id} with an invitation token',
      action: 'user.updated',
      table: 'users',
      async arrange() {
        const user = await newUser()
        const token = await invite(await newTenant(), user.email)
        const firstName = uniqueName('Ada')
        return {
          write: () =>
            api('PUT', `/v1/users/${user.id}`, { authorization: `Token ${token}`, body: { firstName } }),
          stored: async () => (await get(`/v1/users/${user.id}`)).body.result.firstName === firstName,
        }
      },
    },
    {
      name: 'DELETE /v1/users/{id} (erasure)',
      action: 'user.erased',
      table: 'users',
      async arrange() {
        const user = await newUser()
        return {
          write: () => api('DELETE', `/v1/users/${user.id}`, as(r.admin)),
          stored: async () => (await get(`/v1/users/${user.id}`)).body.result.status === 'erased',
        }
      },
    },
  ]
}
