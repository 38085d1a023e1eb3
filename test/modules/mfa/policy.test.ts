import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { addTotp, signInWithTotp } from '../../helpers/mfa.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Where a second-factor policy binds a person's own credentials (docs/security.md, "Second factors",
 * "Signing in with a second factor"): the last factor stays, and Basic with a password is refused.
 */
const t = useTestApp()

/** A member of a tenant whose policy is `policy`, with a password-only token. */
async function memberUnder(policy: 'required' | 'optional') {
  const tenant = await createTenantAsAdmin(t, { mfaPolicy: policy })
  const user = await insertUser(t.database.handle.db)
  await insertMembership(t.database.handle.db, {
    tenantId: tenant.id,
    userId: user.id,
    roleId: ROLE_IDS.agent,
  })
  t.ctx.access.invalidate()
  return { tenant, user, token: await t.tokenFor(user.email, user.password) }
}

const basic = (user: { email: string; password: string }) =>
  `Basic ${Buffer.from(`${user.email}:${user.password}`).toString('base64')}`

describe('a second-factor policy over one’s own factors', () => {
  it('keeps the last factor while a policy requires one (409), lets one of two go', async () => {
    const { user, token } = await memberUnder('required')
    const first = await addTotp(t, token)
    const person = { ...user, ...first, passwordToken: token }
    const stepped = await signInWithTotp(t, person)
    const last = await t.request('DELETE', `/v1/me/factors/${first.factorId}`, { token: stepped })
    expect(last.status).toBe(409)
    expect(last.body.error.reason).toBe('mfa_required_by_policy')
    const second = await addTotp(t, stepped)
    expect((await t.request('DELETE', `/v1/me/factors/${first.factorId}`, { token: stepped })).status).toBe(
      204,
    )
    const nowLast = await t.request('DELETE', `/v1/me/factors/${second.factorId}`, { token: stepped })
    expect(nowLast.status).toBe(409)
  })

  it('lets the last factor go where no policy requires one', async () => {
    const { user, token } = await memberUnder('optional')
    const factor = await addTotp(t, token)
    const stepped = await signInWithTotp(t, { ...user, ...factor, passwordToken: token })
    expect((await t.request('DELETE', `/v1/me/factors/${factor.factorId}`, { token: stepped })).status).toBe(
      204,
    )
  })

  it('refuses Basic email:password under a policy that requires a factor, even before one is added', async () => {
    const required = await memberUnder('required')
    const refused = await t.request('GET', '/v1/me/sessions', { authorization: basic(required.user) })
    expect(refused.status).toBe(401)
    expect(refused.body.error.reason).toBe('mfa_required')
    const optional = await memberUnder('optional')
    expect((await t.request('GET', '/v1/me/sessions', { authorization: basic(optional.user) })).status).toBe(
      200,
    )
  })
})
