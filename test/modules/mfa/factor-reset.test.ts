import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { composeMail } from '../../../src/outbox/mail-delivery.js'
import { insertUser, memberWithToken } from '../../helpers/fixtures.js'
import {
  authenticatorFor,
  enrolPasskeyOverHttp,
  type SoftAuthenticator,
} from '../../helpers/soft-authenticator.js'
import { useTestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'
import { supervisorAndOthers } from '../../helpers/users.js'

/**
 * An administrator's reset of someone's second factors (docs/security.md, "An administrator's reset"):
 * what it removes and ends, the e-mail, the event — and who may not: above the caller's ceiling, oneself,
 * or without a recent second factor of one's own.
 */
const t = useTestApp()
const db = () => t.database.handle.db

async function passkeyOf(person: { email: string; password: string }) {
  const token = await t.tokenFor(person.email, person.password)
  const authenticator = authenticatorFor(t.config.publicUrl)
  await enrolPasskeyOverHttp(t, token, authenticator)
  return { authenticator, token }
}

async function factorsOf(userId: string) {
  const factors = await db().selectFrom('user_factors').select('id').where('user_id', '=', userId).execute()
  const codes = await db()
    .selectFrom('recovery_codes')
    .select('code_hash')
    .where('user_id', '=', userId)
    .execute()
  return { factors: factors.length, codes: codes.length }
}

async function passkeySignIn(authenticator: SoftAuthenticator) {
  const options = await t.request('POST', '/v1/tokens/passkey/options', { body: {} })
  const response = authenticator.assert(options.body.result)
  return t.request('POST', '/v1/tokens/passkey', { body: { response } })
}

const reset = (userId: string, token: string) => t.request('DELETE', `/v1/users/${userId}/factors`, { token })

describe('an administrator’s reset of second factors', () => {
  it('removes every factor and recovery code, ends every session, e-mails the person, records user.mfa_reset', async () => {
    const person = await insertUser(db())
    const { authenticator } = await passkeyOf(person)
    const now = t.clock.now()
    await db()
      .insertInto('recovery_codes')
      .values([1, 2, 3].map((n) => ({ user_id: person.id, code_hash: `hash-${n}`, created: now })))
      .execute()
    const signedIn = await passkeySignIn(authenticator)
    expect(signedIn.status).toBe(200)

    const response = await reset(person.id, await t.adminToken())
    expect(response.status).toBe(204)
    expect(await factorsOf(person.id)).toEqual({ factors: 0, codes: 0 })
    expect((await t.request('POST', '/v1/login', { token: signedIn.body.token })).status).toBe(401)
    expect((await passkeySignIn(authenticator)).status).toBe(401)
    // The password alone signs in again: the person sets up a new factor.
    expect(await t.tokenFor(person.email, person.password)).toBeTruthy()

    const events = await t.request('GET', `/v1/audit-events?action=user.mfa_reset&targetId=${person.id}`, {
      token: await t.adminToken(),
    })
    expect(events.body.result).toHaveLength(1)
    const { changes } = events.body.result[0]
    expect(changes.factors[0]).toHaveLength(1)
    expect(changes.recoveryCodes).toEqual([3, 0])
    expect(changes.sessions[0]).toHaveLength(2)

    const row = await db()
      .selectFrom('outbox')
      .selectAll()
      .where('kind', '=', 'factor_reset_email')
      .where(({ ref }) => ref('payload', '->>').key('userId' as never), '=', person.id)
      .executeTakeFirstOrThrow()
    const mail = composeMail({ keys: t.ctx.keys, config: t.config }, row)
    expect(mail.to).toBe(person.email)
    expect(mail.text).toContain('Your second factors were reset by an administrator')
    expect(mail.text).toContain('If this was not expected, contact')
    expect(mail.text).toContain(`(${TEST_ADMIN.email})`)
    expect(mail.text).not.toMatch(/https?:\/\//)
    expect(mail.html).toContain('<html lang="en"')
  })

  it('refuses a tenant administrator resetting a Platform Administrator’s factors (403 role_exceeds_caller)', async () => {
    const { tenant, supervisor, member, stranger, boss } = await supervisorAndOthers(t)
    await passkeyOf(boss)
    const refused = await reset(boss.id, supervisor.token)
    expect(refused.status).toBe(403)
    expect(refused.body.error.reason).toBe('role_exceeds_caller')
    expect((await factorsOf(boss.id)).factors).toBe(1)
    // Nor anyone it cannot see (404), nor without MANAGE_ALL_USERS (403); a member it manages: 204.
    expect((await reset(stranger.id, supervisor.token)).status).toBe(404)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const byAgent = await reset(member.id, agent.token)
    expect(byAgent.status).toBe(403)
    expect(byAgent.body.error.reason).toBe('permission_denied')
    await passkeyOf(member)
    expect((await reset(member.id, supervisor.token)).status).toBe(204)
    expect((await factorsOf(member.id)).factors).toBe(0)
  })

  it('refuses to reset one’s own factors (409 self_lockout)', async () => {
    const admin = await insertUser(db(), { roleId: ROLE_IDS.platformAdministrator })
    const { token } = await passkeyOf(admin)
    const refused = await reset(admin.id, token)
    expect(refused.status).toBe(409)
    expect(refused.body.error.reason).toBe('self_lockout')
    expect((await factorsOf(admin.id)).factors).toBe(1)
  })

  it('is a step-up operation: an administrator with a factor needs one from the last 10 minutes', async () => {
    const admin = await insertUser(db(), { roleId: ROLE_IDS.platformAdministrator })
    const { authenticator: adminKey } = await passkeyOf(admin)
    const person = await insertUser(db())
    await passkeyOf(person)
    // Signed in with the passkey, whose second factor is more than 10 minutes old when it resets.
    const signedIn = await passkeySignIn(adminKey)
    t.clock.advance(10 * 60_000 + 1_000)
    const asked = await reset(person.id, signedIn.body.token)
    expect(asked.status).toBe(401)
    expect(asked.body.error.reason).toBe('reauthentication_required')
    expect((await factorsOf(person.id)).factors).toBe(1)
    const mfa = asked.body.error.mfa
    const stepped = await t.request('POST', '/v1/tokens/step-up', {
      token: signedIn.body.token,
      body: { mfaToken: mfa.token, webauthn: adminKey.assert(mfa.webauthn) },
    })
    expect(stepped.status).toBe(200)
    expect((await reset(person.id, stepped.body.token)).status).toBe(204)
  })
})
