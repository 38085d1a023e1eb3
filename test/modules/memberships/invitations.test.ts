import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { insertUser } from '../../helpers/fixtures.js'
import { useInvitationFixture } from '../../helpers/invitation-fixture.js'

/**
 * The life of an invitation token (docs/api.md#tenant-users-and-invitations): delivered by mail through a real SMTP server, looked up,
 * accepted once, replaced by a resend, killed by a cancel, expired by the clock; stored only as a hash.
 * Also the acceptance page's answers over HTTP (the browser drives it in test/web/invitation.test.ts).
 */
const DAY_MS = 86_400_000

const f = useInvitationFixture()
const { t, userWithoutPassword, inviteAndReadToken } = f

function lookUp(invitationToken: string) {
  return t.request('GET', `/v1/invitations/${encodeURIComponent(invitationToken)}`)
}

function accept(invitationToken: string, body: Record<string, unknown> = {}) {
  return t.request('POST', `/v1/invitations/${encodeURIComponent(invitationToken)}/accept`, { body })
}

async function membership(userId: string) {
  return (await t.request('GET', `/v1/tenants/${f.tenant.id}/users/${userId}`, { token: f.token })).body
    .result
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url')
}

describe('the token', () => {
  it('is stored only as its SHA-256, and the mail keeps no copy once sent', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    expect(invitationToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const db = t.database.handle.db
    const row = await db
      .selectFrom('tenant_users')
      .selectAll()
      .where('tenant_id', '=', f.tenant.id)
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow()
    expect(row.invitation_token_hash).toBe(sha256(invitationToken))
    expect(JSON.stringify(row)).not.toContain(invitationToken)
    // Once marked sent, the outbox row holds neither the token nor its encrypted envelope.
    await expect.poll(async () => (await membership(user.id)).invitationEmailStatus).toBe('sent')
    const outbox = await db.selectFrom('outbox').selectAll().where('tenant_id', '=', f.tenant.id).execute()
    const mine = outbox.filter((r) => (r.payload as { userId: string }).userId === user.id)
    expect(mine).toHaveLength(1)
    expect(mine[0]!.payload).not.toHaveProperty('envelope')
    expect(JSON.stringify(mine)).not.toContain(invitationToken)
    // And the API never shows it.
    expect((await membership(user.id)).invitationToken).toBeNull()
  })

  it('describes the invitation: tenant, role, e-mail, expiry and whether a password is needed', async () => {
    const user = await userWithoutPassword()
    const invitedAt = t.clock.now().getTime()
    const invitationToken = await inviteAndReadToken(user)
    const response = await lookUp(invitationToken)
    expect(response.status).toBe(200)
    expect(response.body.result).toEqual({
      tenantId: f.tenant.id,
      tenantName: f.tenant.name,
      email: user.email,
      roleName: 'Agent',
      expiresAt: new Date(invitedAt + DAY_MS).toISOString(),
      needsPassword: true,
    })
  })

  it('works once: the password and names are set, and the user can log in and see the tenant', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user, { roleId: ROLE_IDS.supervisor })
    const accepted = await accept(invitationToken, {
      password: 'a new password',
      firstName: 'Grace',
      lastName: 'Hopper',
    })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result).toMatchObject({
      tenantId: f.tenant.id,
      userId: user.id,
      status: 'accepted',
      invitationStatus: 'enabled',
      firstName: 'Grace',
      lastName: 'Hopper',
      invitationToken: null,
    })
    expect(accepted.body.result.activeExtension).toEqual(accepted.body.result.extensions[0])

    const session = await t.request('POST', '/v1/tokens', {
      body: { username: user.email, password: 'a new password' },
    })
    expect(session.status).toBe(200)
    const login = await t.request('POST', '/v1/login', { token: session.body.token })
    expect(login.body.result.tenants).toEqual([
      expect.objectContaining({
        tenantId: f.tenant.id,
        tenantName: f.tenant.name,
        roleId: ROLE_IDS.supervisor,
        roleName: 'Supervisor',
        tenantPermissions: [
          'VIEW_ALL_USERS',
          'MANAGE_ALL_USERS',
          'MANAGE_TENANT_ENROLLMENT',
          'VIEW_ALL_PROVIDERS',
          'VIEW_ALL_ROLES',
        ],
      }),
    ])

    for (const again of [
      await accept(invitationToken, { password: 'another password' }),
      await lookUp(invitationToken),
    ]) {
      expect(again.status).toBe(404)
      expect(again.body.error.reason).toBe('invitation_not_found')
    }
    // The second attempt changed nothing: the first password still works.
    expect(
      (
        await t.request('POST', '/v1/tokens', {
          body: { username: user.email, password: 'another password' },
        })
      ).status,
    ).toBe(401)
  })

  it('asks a user without a password for one, and leaves the invitation open when it is missing or short', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const missing = await accept(invitationToken)
    expect(missing.status).toBe(400)
    expect(missing.body.error.attribute).toHaveProperty('password')
    const short = await accept(invitationToken, { password: 'short' })
    expect(short.status).toBe(400)
    expect(short.body.error.attribute).toHaveProperty('password')
    expect((await membership(user.id)).status).toBe('invited')
    expect((await accept(invitationToken, { password: 'long enough now' })).status).toBe(200)
  })

  it('never replaces the password of a user who has one', async () => {
    const user = await insertUser(t.database.handle.db)
    const invitationToken = await inviteAndReadToken(user)
    expect((await lookUp(invitationToken)).body.result.needsPassword).toBe(false)
    const accepted = await accept(invitationToken, { password: 'an attacker’s choice', firstName: 'Mallory' })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result.firstName).toBe('')
    expect(
      (await t.request('POST', '/v1/tokens', { body: { username: user.email, password: user.password } }))
        .status,
    ).toBe(200)
  })

  it('asks no password of an SSO-only user (noPassword true)', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user, { noPassword: true })
    expect((await lookUp(invitationToken)).body.result.needsPassword).toBe(false)
    const accepted = await accept(invitationToken)
    expect(accepted.status).toBe(200)
    expect(accepted.body.result.invitationStatus).toBe('sso-only')
  })

  it('answers 404 invitation_not_found to a wrong or malformed token', async () => {
    const wellFormed = Buffer.alloc(32, 1).toString('base64url')
    for (const wrong of [wellFormed, 'abc', 'not a token!', `${wellFormed}x`, wellFormed.repeat(4)]) {
      for (const response of [await lookUp(wrong), await accept(wrong, { password: 'whatever password' })]) {
        expect(response.status).toBe(404)
        expect(response.body.error.reason).toBe('invitation_not_found')
      }
    }
  })
})

describe('resend, cancel and expiry', () => {
  it('resend: a new token and a new window; the first link dies and the second works', async () => {
    const user = await userWithoutPassword()
    const first = await inviteAndReadToken(user)
    const firstExpiry = (await membership(user.id)).invitationExpiryDate
    t.clock.advance(3_600_000)
    const second = await inviteAndReadToken(user, {}, true)
    expect(second).not.toBe(first)
    const record = await membership(user.id)
    expect(new Date(record.invitationExpiryDate).getTime()).toBe(new Date(firstExpiry).getTime() + 3_600_000)
    expect((await lookUp(first)).status).toBe(404)
    expect((await accept(first, { password: 'a fine password' })).status).toBe(404)
    expect((await accept(second, { password: 'a fine password' })).status).toBe(200)
  })

  it('cancel: the link answers 404 and the user is pending again', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const cancelled = await t.request('PUT', `/v1/tenants/${f.tenant.id}/users/${user.id}`, {
      token: f.token,
      body: { status: 'pending' },
    })
    expect(cancelled.status).toBe(200)
    const response = await lookUp(invitationToken)
    expect(response.status).toBe(404)
    expect(response.body.error.reason).toBe('invitation_not_found')
    expect((await accept(invitationToken, { password: 'a fine password' })).status).toBe(404)
    expect((await membership(user.id)).status).toBe('pending')
  })

  it('expires after 24 hours by the clock: 410, `expired`, the page says so; a resend works again', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    t.clock.advance(DAY_MS - 1000)
    expect((await lookUp(invitationToken)).status).toBe(200)
    t.clock.advance(2000) // 24 h + 1 s after the invitation
    await f.refreshToken()
    expect((await membership(user.id)).invitationStatus).toBe('expired')
    const list = await t.request('GET', `/v1/tenants/${f.tenant.id}/users`, { token: f.token })
    expect(list.body.result.find((u: { userId: string }) => u.userId === user.id).invitationStatus).toBe(
      'expired',
    )
    for (const response of [
      await lookUp(invitationToken),
      await accept(invitationToken, { password: 'a fine password' }),
    ]) {
      expect(response.status).toBe(410)
      expect(response.body.error.reason).toBe('invitation_expired')
    }
    const page = await t.request('GET', `/invitations/accept?token=${invitationToken}`)
    expect(page.status).toBe(410)
    expect(page.body).toContain('This invitation has expired')

    const fresh = await inviteAndReadToken(user, {}, true)
    expect((await membership(user.id)).invitationStatus).toBe('invited')
    expect((await lookUp(invitationToken)).status).toBe(404)
    expect((await accept(fresh, { password: 'a fine password' })).status).toBe(200)
  })
})

describe('PUT /v1/tenants/{t}/users/{u} with Authorization: Token <invitation token>', () => {
  it('accepts without a password, for its own membership only, once', async () => {
    const user = await userWithoutPassword()
    const other = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    await inviteAndReadToken(other)
    const put = (userId: string, body: Record<string, unknown>) =>
      t.request('PUT', `/v1/tenants/${f.tenant.id}/users/${userId}`, {
        authorization: `Token ${invitationToken}`,
        body,
      })

    const wrongUser = await put(other.id, { status: 'accepted' })
    expect(wrongUser.status).toBe(404)
    expect(wrongUser.body.error.reason).toBe('invitation_not_found')
    // Anything but the acceptance with the token is 401 (docs/api.md#passwords-and-the-existing-clients-flows).
    const more = await put(user.id, { status: 'accepted', roleId: ROLE_IDS.administrator })
    expect(more.status).toBe(401)
    expect((await membership(user.id)).status).toBe('invited')

    const accepted = await put(user.id, { status: 'accepted' })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result).toMatchObject({ status: 'accepted', roleId: ROLE_IDS.agent })
    expect((await membership(other.id)).status).toBe('invited')

    const again = await put(user.id, { status: 'accepted' })
    expect(again.status).toBe(404)
    // The token is no credential anywhere else.
    const elsewhere = await t.request('GET', `/v1/tenants/${f.tenant.id}/users/${user.id}`, {
      authorization: `Token ${invitationToken}`,
    })
    expect(elsewhere.status).toBe(401)
  })
})
