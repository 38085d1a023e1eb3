import { uuidv7 } from 'uuidv7'
import { afterEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser, memberWithToken } from '../../helpers/fixtures.js'
import { giveFactor, tokenWonWith } from '../../helpers/mfa-policy.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * GET/PUT /v1/platform/security (docs/security.md, "Policy"): whether platform roles need a second factor;
 * Platform Administrator only, a step-up operation, audited; while required, a credential without a
 * second factor carries no platform permission.
 */
const t = useTestApp()

afterEach(async () => {
  await t.ctx.db.updateTable('platform').set({ mfa_for_platform_roles: 'optional' }).execute()
  t.ctx.access.invalidate()
  t.clock.set(new Date())
})

/** A Platform Administrator with an authenticator app and a token won with it. */
async function administratorWithFactor() {
  const person = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
  await giveFactor(t.ctx.db, person.id)
  return { ...person, token: await tokenWonWith(t, person.id) }
}

/** A platform role of its own with these permissions (written as a row: the scene, not the subject). */
async function platformRole(permissions: string[]): Promise<string> {
  const id = uuidv7()
  const now = new Date()
  const name = `Auditor ${id}`
  await t.ctx.db
    .insertInto('roles')
    .values({
      id,
      scope: 'platform',
      tenant_id: null,
      name,
      name_key: name.toLowerCase(),
      permissions,
      built_in: false,
      created: now,
      created_by: null,
      updated: now,
      updated_by: null,
    })
    .execute()
  t.ctx.access.invalidate()
  return id
}

const security = (token: string) => t.request('GET', '/v1/platform/security', { token })
const setSecurity = (token: string, mfaForPlatformRoles: string) =>
  t.request('PUT', '/v1/platform/security', { token, body: { mfaForPlatformRoles } })

describe('who may read and change it', () => {
  it('is optional at first; a Platform Administrator reads it', async () => {
    const response = await security(await t.adminToken())
    expect(response.status).toBe(200)
    expect(response.body.result).toEqual({ mfaForPlatformRoles: 'optional' })
  })

  it('refuses anyone else (403): a tenant Administrator, a Platform User, another platform role with permissions', async () => {
    const tenant = await createTenantAsAdmin(t)
    const tenantAdmin = await memberWithToken(t, tenant.id, ROLE_IDS.administrator)
    const platformUser = await insertUser(t.database.handle.db)
    const auditor = await insertUser(t.database.handle.db, {
      roleId: await platformRole(['VIEW_AUDIT_LOG', 'MANAGE_TENANT']),
    })
    const tokens = [
      tenantAdmin.token,
      await t.tokenFor(platformUser.email, platformUser.password),
      await t.tokenFor(auditor.email, auditor.password),
    ]
    // The auditor's platform role does grant: the refusal is about who, not about a lack of permissions.
    expect((await t.request('GET', '/v1/audit-events', { token: tokens[2] })).status).toBe(200)
    for (const token of tokens) {
      expect((await security(token)).status).toBe(403)
      const change = await setSecurity(token, 'optional')
      expect(change.status).toBe(403)
      expect(change.body.error.reason).toBe('permission_denied')
    }
    expect((await security(await t.adminToken())).body.result.mfaForPlatformRoles).toBe('optional')
  })

  it('refuses a value outside the list with 400 naming the field', async () => {
    const response = await setSecurity(await t.adminToken(), 'sometimes')
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('mfaForPlatformRoles')
  })

  it('will not be turned on by an administrator without a factor of their own (409), nobody is locked out', async () => {
    const response = await setSecurity(await t.adminToken(), 'required')
    expect(response.status).toBe(409)
    expect(response.body.error.reason).toBe('mfa_required_by_policy')
    expect((await security(await t.adminToken())).body.result.mfaForPlatformRoles).toBe('optional')
  })

  it('is a step-up operation: a second factor older than 10 minutes is asked again (401 with the challenge)', async () => {
    const admin = await administratorWithFactor()
    t.clock.advance(11 * 60_000)
    const response = await setSecurity(admin.token, 'required')
    expect(response.status).toBe(401)
    expect(response.body.error.reason).toBe('reauthentication_required')
    expect(response.body.error.mfa.token).toEqual(expect.any(String))
  })
})

describe('while required', () => {
  it('is turned on by an administrator with a factor, and audited', async () => {
    const admin = await administratorWithFactor()
    const response = await setSecurity(admin.token, 'required')
    expect(response.status).toBe(200)
    expect(response.body.result).toEqual({ mfaForPlatformRoles: 'required' })
    const events = await t.request('GET', '/v1/audit-events?action=platform.security_updated', {
      token: admin.token,
    })
    expect(events.body.result[0]).toMatchObject({
      actor: { type: 'user', id: admin.id },
      target: { type: 'platform', id: t.ctx.platform.id },
      tenantId: null,
      changes: { mfaForPlatformRoles: ['optional', 'required'] },
    })
  })

  it('a platform role used with a password-only token grants nothing; with a second factor it does', async () => {
    const admin = await administratorWithFactor()
    const tenant = await createTenantAsAdmin(t)
    const passwordOnly = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const before = await t.tokenFor(passwordOnly.email, passwordOnly.password)
    expect((await t.request('GET', '/v1/audit-events', { token: before })).status).toBe(200)
    expect((await setSecurity(admin.token, 'required')).status).toBe(200)

    const audit = await t.request('GET', '/v1/audit-events', { token: before })
    expect(audit.status).toBe(403)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}`, { token: before })).status).toBe(404)
    expect((await security(before)).status).toBe(403)
    const login = await t.request('POST', '/v1/login', { token: before })
    expect(login.body.result.platformRoleId).toBe(ROLE_IDS.platformAdministrator)

    expect((await t.request('GET', '/v1/audit-events', { token: admin.token })).status).toBe(200)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}`, { token: admin.token })).status).toBe(200)
  })

  it('leaves tenant memberships to their tenants’ policies', async () => {
    const admin = await administratorWithFactor()
    const tenant = await createTenantAsAdmin(t)
    const person = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: person.id,
      roleId: ROLE_IDS.supervisor,
    })
    t.ctx.access.invalidate()
    expect((await setSecurity(admin.token, 'required')).status).toBe(200)
    const token = await t.tokenFor(person.email, person.password)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token })).status).toBe(200)
    expect((await t.request('GET', '/v1/audit-events', { token })).status).toBe(403)
  })
})
