import { randomUUID } from 'node:crypto'
import { inflateRawSync } from 'node:zlib'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { openInvitationMail } from '../../../src/outbox/mail/invitation-mail.js'
import { openPasswordResetMail } from '../../../src/outbox/mail/password-reset-mail.js'
import { closeAfterBulk } from '../../helpers/bulk.js'
import {
  createTenantAsAdmin,
  insertMembership,
  insertUser,
  REGION_ID,
  uniqueEmail,
  uniqueName,
} from '../../helpers/fixtures.js'
import { createTestIdp, type TestIdp } from '../../helpers/saml-idp.js'
import { type ApiResponse, type TestApp, useTestApp } from '../../helpers/test-app.js'

/**
 * A change and its audit event commit together or not at all (API.md §13), for every write of the API
 * that records an event. Black-box: each write goes through the API, and what it stored is read back
 * through the API, so this holds whether a path writes its event in the change's transaction or in the
 * change's own statement. Faults are injected with throw-away triggers on this test's own database:
 *
 * - the event cannot be written (a trigger on audit_events refuses that action): the write answers an
 *   error and its change is not stored — a path that wrote its event after committing its change would
 *   leave the change behind;
 * - the change cannot be written (a trigger on the change's own table refuses every row): the write
 *   answers an error and no event is stored — a path that wrote its event before its change, on its own,
 *   would leave the event behind.
 *
 * A database failure is the error handler's 500 `internal` (the pages' 500 page; a bulk NDJSON stream's
 * last line): here it is the test's fault injection, not a bug.
 *
 * Not here: `user.login_locked` / `api_key.login_locked`, the one event that records no change (a refused
 * login; its counters are not the event's change), and the worker's events (invitation.expired,
 * webhook.disabled, invitation.email_failed), which no request writes.
 */
const t = useTestApp()
let admin: string
let idp: TestIdp

beforeAll(async () => {
  admin = await t.adminToken()
  idp = createTestIdp()
  await sql
    .raw(
      `create function test_refuse() returns trigger language plpgsql as $$
       begin raise exception 'refused by the test on %', tg_table_name; end $$`,
    )
    .execute(t.ctx.db)
})
afterAll(() => closeAfterBulk(t))

/** What a write answered: its status and, for a JSON error, the reason. */
interface Outcome {
  status: number
  reason?: string
}

function outcome(response: ApiResponse): Outcome {
  const reason = typeof response.body === 'object' ? response.body?.error?.reason : undefined
  return reason === undefined ? { status: response.status } : { status: response.status, reason }
}

/** A write under test, arranged, and how to read back what it changed. */
interface Scene {
  /** Sends the write; it may be sent again once the fault is gone. */
  write(): Promise<Outcome>
  /** Whether the write's change is stored, read back through the API. */
  stored(): Promise<boolean>
}

interface WriteAction {
  /** The request, and what it does. */
  name: string
  /** The audit action the event-side fault refuses (its first event, when a write records several). */
  action: string
  /** The change's own table, which the change-side fault refuses. */
  table: string
  arrange(): Promise<Scene>
}

const as = (token: string) => ({ token })
const api = async (method: string, url: string, options: Parameters<TestApp['request']>[2] = {}) =>
  outcome(await t.request(method, url, options))
const get = (url: string) => t.request('GET', url, as(admin))

async function newTenant() {
  return (await createTenantAsAdmin(t)).id
}

/** A platform user made through the API (no password), and its id. */
async function newUser(): Promise<{ id: string; email: string }> {
  const email = uniqueEmail('rb')
  const response = await t.request('POST', '/v1/users', {
    token: admin,
    body: { email, roleId: ROLE_IDS.platformUser },
  })
  expect(response.status).toBe(201)
  return { id: response.body.result.id, email }
}

async function userExists(email: string): Promise<boolean> {
  return (await get(`/v1/users?email=${encodeURIComponent(email)}`)).status === 200
}

async function membership(tenantId: string, userId: string) {
  const response = await get(`/v1/tenants/${tenantId}/users/${userId}`)
  return response.status === 200 ? response.body.result : undefined
}

/** Invites a user (status invited) and returns the token its e-mail carries. */
async function invite(tenantId: string, email: string): Promise<string> {
  const invited = await t.request('POST', `/v1/tenants/${tenantId}/users`, {
    token: admin,
    body: { email, roleId: ROLE_IDS.agent, status: 'invited' },
  })
  expect(invited.status).toBe(201)
  const [mail] = await t.ctx.db
    .selectFrom('outbox')
    .select(['id', 'payload'])
    .where('kind', '=', 'invitation_email')
    .where(sql<boolean>`payload->>'to' = ${email}`)
    .execute()
  return openInvitationMail(t.ctx.keys, mail!.id, mail!.payload as Record<string, unknown>).token
}

/** Has an administrator send a reset link to the user and returns its token. */
async function resetToken(userId: string): Promise<string> {
  const response = await t.request('PUT', `/v1/users/${userId}`, {
    token: admin,
    body: { resetPassword: true },
  })
  expect(response.status).toBe(200)
  const [mail] = await t.ctx.db
    .selectFrom('outbox')
    .select(['id', 'payload'])
    .where('kind', '=', 'password_reset_email')
    .where(sql<boolean>`payload->>'userId' = ${userId}`)
    .execute()
  return openPasswordResetMail(t.ctx.keys, mail!.id, mail!.payload as Record<string, unknown>).token
}

const form = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

const PASSWORD = 'a long enough password'

async function tenantFieldIs(tenantId: string, field: string, value: unknown) {
  return (await get(`/v1/tenants/${tenantId}`)).body.result[field] === value
}

/** An integration made through the API in `tenantId`. */
async function newIntegration(tenantId: string): Promise<string> {
  const response = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, {
    token: admin,
    body: {
      type: 'rest',
      name: uniqueName('CRM'),
      properties: { endpointPrefix: 'https://crm.example.com' },
    },
  })
  expect(response.status).toBe(201)
  return response.body.result.id
}

const ACTIONS: WriteAction[] = [
  {
    name: 'POST /v1/tenants',
    action: 'tenant.created',
    table: 'tenants',
    async arrange() {
      const name = uniqueName('Rollback')
      return {
        write: () => api('POST', '/v1/tenants', { token: admin, body: { name, regionId: REGION_ID } }),
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
        write: () => api('PUT', `/v1/tenants/${tenantId}`, { token: admin, body: { description } }),
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
          api('POST', '/v1/users', { token: admin, body: { email, roleId: ROLE_IDS.platformUser } }),
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
            token: admin,
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
            headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/x-ndjson' },
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
            token: admin,
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
        write: () => api('PUT', `/v1/users/${user.id}`, { token: admin, body: { lastName } }),
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
        write: () => api('PUT', `/v1/users/${user.id}`, { token: admin, body: { resetPassword: true } }),
        stored: async () => (await get(`/v1/users/${user.id}`)).body.result.resetPasswordExpiryDate !== null,
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
        stored: async () => (await get(`/v1/users/${user.id}`)).body.result.resetPasswordExpiryDate !== null,
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
          api('POST', '/password-reset', form({ token, password: PASSWORD, passwordConfirmation: PASSWORD })),
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
        write: () => api('DELETE', `/v1/users/${user.id}`, as(admin)),
        stored: async () => (await get(`/v1/users/${user.id}`)).body.result.status === 'erased',
      }
    },
  },
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
            token: admin,
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
            token: admin,
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
            token: admin,
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
        write: () => api('DELETE', `/v1/tenants/${tenantId}/users/${user.id}`, as(admin)),
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
  {
    name: 'POST /v1/tenants/{t}/integrations',
    action: 'integration.created',
    table: 'integrations',
    async arrange() {
      const tenantId = await newTenant()
      const name = uniqueName('CRM')
      return {
        write: () =>
          api('POST', `/v1/tenants/${tenantId}/integrations`, {
            token: admin,
            body: {
              type: 'rest',
              name,
              properties: { endpointPrefix: 'https://crm.example.com', password: 's3cret' },
            },
          }),
        stored: async () =>
          ((await get(`/v1/tenants/${tenantId}/integrations`)).body.result as any[]).some(
            (i) => i.name === name,
          ),
      }
    },
  },
  {
    name: 'POST /v1/tenants/{t}/integrations/{id} (a client-chosen id)',
    action: 'integration.created',
    table: 'integrations',
    async arrange() {
      const tenantId = await newTenant()
      const id = randomUUID()
      return {
        write: () =>
          api('POST', `/v1/tenants/${tenantId}/integrations/${id}`, {
            token: admin,
            body: { attributes: { type: 'rest', name: uniqueName('CRM'), active: false, properties: {} } },
          }),
        stored: async () => (await get(`/v1/tenants/${tenantId}/integrations/${id}`)).status === 200,
      }
    },
  },
  {
    name: 'PUT /v1/tenants/{t}/integrations/{id}',
    action: 'integration.updated',
    table: 'integrations',
    async arrange() {
      const tenantId = await newTenant()
      const id = await newIntegration(tenantId)
      const description = uniqueName('Nightly sync')
      return {
        write: () =>
          api('PUT', `/v1/tenants/${tenantId}/integrations/${id}`, { token: admin, body: { description } }),
        stored: async () =>
          (await get(`/v1/tenants/${tenantId}/integrations/${id}`)).body.result.description === description,
      }
    },
  },
  {
    name: 'DELETE /v1/tenants/{t}/integrations/{id}',
    action: 'integration.deleted',
    table: 'integrations',
    async arrange() {
      const tenantId = await newTenant()
      const id = await newIntegration(tenantId)
      return {
        write: () => api('DELETE', `/v1/tenants/${tenantId}/integrations/${id}`, as(admin)),
        stored: async () => (await get(`/v1/tenants/${tenantId}/integrations/${id}`)).status === 404,
      }
    },
  },
  {
    name: 'POST /v1/tenants/{t}/api-keys',
    action: 'api_key.created',
    table: 'api_keys',
    async arrange() {
      const tenantId = await newTenant()
      const name = uniqueName('Robot')
      return {
        write: () =>
          api('POST', `/v1/tenants/${tenantId}/api-keys`, {
            token: admin,
            body: { name, roleId: ROLE_IDS.agent },
          }),
        stored: async () =>
          ((await get(`/v1/tenants/${tenantId}/api-keys`)).body.result as any[]).some((k) => k.name === name),
      }
    },
  },
  {
    name: 'PUT /v1/tenants/{t}/api-keys/{id}',
    action: 'api_key.updated',
    table: 'api_keys',
    async arrange() {
      const tenantId = await newTenant()
      const key = await t.request('POST', `/v1/tenants/${tenantId}/api-keys`, {
        token: admin,
        body: { name: uniqueName('Robot'), roleId: ROLE_IDS.agent },
      })
      expect(key.status).toBe(201)
      const id = key.body.result.id
      return {
        write: () =>
          api('PUT', `/v1/tenants/${tenantId}/api-keys/${id}`, {
            token: admin,
            body: { status: 'disabled' },
          }),
        stored: async () =>
          (await get(`/v1/tenants/${tenantId}/api-keys/${id}`)).body.result.status === 'disabled',
      }
    },
  },
  {
    name: 'POST /v1/tenants/{t}/roles',
    action: 'role.created',
    table: 'roles',
    async arrange() {
      const tenantId = await newTenant()
      const name = uniqueName('Reviewer')
      return {
        write: () =>
          api('POST', `/v1/tenants/${tenantId}/roles`, {
            token: admin,
            body: { name, permissions: ['VIEW_ALL_USERS'] },
          }),
        stored: async () =>
          ((await get(`/v1/tenants/${tenantId}/roles`)).body.result as any[]).some((r) => r.name === name),
      }
    },
  },
  {
    name: 'PUT /v1/tenants/{t}/roles/{id}',
    action: 'role.updated',
    table: 'roles',
    async arrange() {
      const tenantId = await newTenant()
      const role = await t.request('POST', `/v1/tenants/${tenantId}/roles`, {
        token: admin,
        body: { name: uniqueName('Reviewer'), permissions: ['VIEW_ALL_USERS'] },
      })
      expect(role.status).toBe(201)
      const id = role.body.result.id
      const description = uniqueName('Reads users')
      return {
        write: () =>
          api('PUT', `/v1/tenants/${tenantId}/roles/${id}`, { token: admin, body: { description } }),
        stored: async () =>
          (await get(`/v1/tenants/${tenantId}/roles/${id}`)).body.result.description === description,
      }
    },
  },
  {
    name: 'POST /v1/tenants/{t}/webhooks',
    action: 'webhook.created',
    table: 'webhooks',
    async arrange() {
      const tenantId = await newTenant()
      const url = `https://hooks.example.com/${randomUUID()}`
      return {
        write: () =>
          api('POST', `/v1/tenants/${tenantId}/webhooks`, {
            token: admin,
            body: { url, events: ['role.*'] },
          }),
        stored: async () =>
          ((await get(`/v1/tenants/${tenantId}/webhooks`)).body.result as any[]).some((w) => w.url === url),
      }
    },
  },
  {
    name: 'PUT /v1/tenants/{t}/webhooks/{id}',
    action: 'webhook.updated',
    table: 'webhooks',
    async arrange() {
      const tenantId = await newTenant()
      const hook = await t.request('POST', `/v1/tenants/${tenantId}/webhooks`, {
        token: admin,
        body: { url: `https://hooks.example.com/${randomUUID()}`, events: ['role.*'] },
      })
      expect(hook.status).toBe(201)
      const id = hook.body.result.id
      return {
        write: () =>
          api('PUT', `/v1/tenants/${tenantId}/webhooks/${id}`, { token: admin, body: { active: false } }),
        stored: async () =>
          (await get(`/v1/tenants/${tenantId}/webhooks/${id}`)).body.result.active === false,
      }
    },
  },
  {
    name: 'POST /v1/tenants/{t}/identity-providers',
    action: 'identity_provider.created',
    table: 'identity_providers',
    async arrange() {
      const tenantId = await newTenant()
      const name = uniqueName('IdP')
      return {
        write: () =>
          api('POST', `/v1/tenants/${tenantId}/identity-providers`, {
            token: admin,
            body: { name, identityProvider: 'saml', metadataFile: idp.metadata },
          }),
        stored: async () =>
          ((await get(`/v1/tenants/${tenantId}/identity-providers`)).body.result as any[]).some(
            (p) => p.name === name,
          ),
      }
    },
  },
  {
    name: 'PUT /v1/tenants/{t}/identity-providers/{id}',
    action: 'identity_provider.updated',
    table: 'identity_providers',
    async arrange() {
      const tenantId = await newTenant()
      const id = await newSamlProvider(tenantId)
      const name = uniqueName('Renamed IdP')
      return {
        write: () =>
          api('PUT', `/v1/tenants/${tenantId}/identity-providers/${id}`, { token: admin, body: { name } }),
        stored: async () =>
          (await get(`/v1/tenants/${tenantId}/identity-providers/${id}`)).body.result.name === name,
      }
    },
  },
  {
    name: 'POST /v1/sso/{id}/acs (a SAML sign-in, its assertion used up)',
    action: 'user.sso_signed_in',
    table: 'sso_used_assertions',
    async arrange() {
      const tenantId = await newTenant()
      const providerId = await newSamlProvider(tenantId)
      const spMetadata = (await t.request('GET', `/v1/sso/${providerId}/metadata`)).body as string
      const member = await insertUser(t.ctx.db)
      await insertMembership(t.ctx.db, { tenantId, userId: member.id, roleId: ROLE_IDS.agent })
      /** One sign-in: a fresh login at the IdP, answered with this assertion id. */
      const signIn = async (assertionId: string) => {
        const login = await t.request('GET', `/v1/sso/${providerId}/login`)
        expect(login.status).toBe(302)
        const request = new URL(String(login.headers.location)).searchParams.get('SAMLRequest') ?? ''
        const inResponseTo = /ID="([^"]+)"/.exec(
          inflateRawSync(Buffer.from(request, 'base64')).toString(),
        )?.[1]
        const response = await idp.respond(spMetadata, member.email, {
          InResponseTo: inResponseTo ?? '',
          AssertionID: assertionId,
        })
        return api('POST', `/v1/sso/${providerId}/acs`, form({ SAMLResponse: response }))
      }
      let assertionId = ''
      return {
        write: () => {
          assertionId = `_${randomUUID()}`
          return signIn(assertionId)
        },
        // The used assertion is the change: stored, it is refused when presented again.
        stored: async () => (await signIn(assertionId)).status === 401,
      }
    },
  },
]

async function newSamlProvider(tenantId: string): Promise<string> {
  const created = await t.request('POST', `/v1/tenants/${tenantId}/identity-providers`, {
    token: admin,
    body: { name: uniqueName('IdP'), identityProvider: 'saml', metadataFile: idp.metadata },
  })
  expect(created.status).toBe(201)
  return created.body.result.id
}

async function countEvents(action?: string): Promise<number> {
  let query = t.ctx.db.selectFrom('audit_events').select((eb) => eb.fn.countAll<string>().as('n'))
  if (action !== undefined) query = query.where('action', '=', action)
  return Number((await query.executeTakeFirstOrThrow()).n)
}

/** Runs `fn` with a trigger installed that refuses rows, and always removes it. */
async function withRefusal<T>(trigger: string, table: string, fn: () => Promise<T>): Promise<T> {
  await sql.raw(trigger).execute(t.ctx.db)
  try {
    return await fn()
  } finally {
    await sql.raw(`drop trigger if exists test_refuse_row on ${table}`).execute(t.ctx.db)
  }
}

const INTERNAL = { status: 500 }

function expectRefused(result: Outcome) {
  expect(result).toMatchObject(INTERNAL)
  if (result.reason !== undefined) expect(result.reason).toBe('internal')
}

describe('a change and its audit event commit together (API.md §13)', () => {
  it('covers every recordAudit call a request reaches', () => {
    // The audit actions of this table; a new write path with an event belongs in it.
    expect(new Set(ACTIONS.map((a) => a.action))).toEqual(
      new Set([
        'tenant.created',
        'tenant.updated',
        'user.created',
        'user.updated',
        'user.password_reset_requested',
        'user.password_changed',
        'user.erased',
        'membership.created',
        'membership.invited',
        'membership.role_changed',
        'membership.removed',
        'membership.status_changed',
        'integration.created',
        'integration.updated',
        'integration.deleted',
        'api_key.created',
        'api_key.updated',
        'role.created',
        'role.updated',
        'webhook.created',
        'webhook.updated',
        'identity_provider.created',
        'identity_provider.updated',
        'user.sso_signed_in',
      ]),
    )
  })

  describe.each(ACTIONS)('$name', ({ action, table, arrange }) => {
    it(`an event that cannot be written (${action}) takes the change with it; without the fault both are stored`, async () => {
      const scene = await arrange()
      const refused = await withRefusal(
        `create trigger test_refuse_row before insert on audit_events
         for each row when (new.action = '${action}') execute function test_refuse()`,
        'audit_events',
        () => scene.write(),
      )
      expectRefused(refused)
      expect(await scene.stored()).toBe(false)

      // The same write without the fault: stored, with its event.
      const before = await countEvents(action)
      const written = await scene.write()
      expect(written.status).toBeGreaterThanOrEqual(200)
      expect(written.status).toBeLessThan(400)
      expect(await countEvents(action)).toBeGreaterThan(before)
      expect(await scene.stored()).toBe(true)
    })

    it(`a change that cannot be written (${table}) leaves no event`, async () => {
      const scene = await arrange()
      const before = await countEvents()
      const refused = await withRefusal(
        `create trigger test_refuse_row after insert or update or delete on ${table}
         for each row execute function test_refuse()`,
        table,
        () => scene.write(),
      )
      expectRefused(refused)
      expect(await countEvents()).toBe(before)
      expect(await scene.stored()).toBe(false)
    })
  })
})
