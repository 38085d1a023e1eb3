import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { REGION_ID, uniqueName } from '../../helpers/fixtures.js'
import { useInvitationFixture } from '../../helpers/invitation-fixture.js'

/**
 * The acceptance page's answers over HTTP (docs/api.md#tenant-users-and-invitations; a browser drives it in test/web/invitation.test.ts), and the
 * rate limits on looking up and accepting invitation tokens. The token's life: invitations.test.ts.
 */

const f = useInvitationFixture()
const { t, userWithoutPassword, inviteAndReadToken } = f

async function membership(userId: string) {
  return (await t.request('GET', `/v1/tenants/${f.tenant.id}/users/${userId}`, { token: f.token })).body
    .result
}

describe('the acceptance page over HTTP', () => {
  function postForm(fields: Record<string, string>) {
    return t.request('POST', '/invitations/accept', {
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
  }

  it('names the tenant, role and e-mail, escaped, with safe headers and a form that needs no script', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const page = await t.request('GET', `/invitations/accept?token=${invitationToken}`)
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['cache-control']).toBe('no-store')
    expect(page.headers['referrer-policy']).toBe('no-referrer')
    expect(page.headers['content-security-policy']).toContain("default-src 'none'")
    const body = page.body as string
    expect(body).toContain('Acme &lt;b&gt;&amp;&lt;/b&gt; &quot;Co&quot;')
    expect(body).not.toContain('<b>&</b>')
    expect(body).toContain('Agent')
    expect(body).toContain(user.email)
    expect(body).toMatch(/<form method="post" action="accept">/)
    expect(body).toMatch(/<label for="password">Password<\/label>/)
    expect(body).not.toContain('<script')
    expect(body).toMatch(/<title>Join Acme [^<]* · Tenantry<\/title>/)
  })

  it('shows visible errors tied to their fields, then accepts', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const mismatch = await postForm({
      token: invitationToken,
      password: 'a long password',
      passwordConfirmation: 'another one',
      firstName: 'Alan',
    })
    expect(mismatch.status).toBe(400)
    expect(mismatch.body).toContain('role="alert"')
    expect(mismatch.body).toMatch(/<title>Error: Join /)
    expect(mismatch.body).toMatch(
      /id="passwordConfirmation"[^>]*aria-invalid="true"[^>]*aria-describedby="passwordConfirmation-error"/,
    )
    expect(mismatch.body).toContain('Repeat the password does not match the password</p>')
    expect(mismatch.body).toContain('value="Alan"')
    const short = await postForm({ token: invitationToken, password: 'short', passwordConfirmation: 'short' })
    expect(short.status).toBe(400)
    expect(short.body).toMatch(/id="password-error">.*Password must be 8–256 characters/)
    expect((await membership(user.id)).status).toBe('invited')

    const done = await postForm({
      token: invitationToken,
      password: 'a long password',
      passwordConfirmation: 'a long password',
      firstName: 'Alan',
      lastName: 'Turing',
    })
    expect(done.status).toBe(200)
    expect(done.body).toContain('You have joined')
    expect(await membership(user.id)).toMatchObject({
      status: 'accepted',
      firstName: 'Alan',
      lastName: 'Turing',
    })
    expect(
      (await t.request('POST', '/v1/tokens', { body: { username: user.email, password: 'a long password' } }))
        .status,
    ).toBe(200)

    const used = await t.request('GET', `/invitations/accept?token=${invitationToken}`)
    expect(used.status).toBe(404)
    expect(used.body).toContain('This invitation has already been accepted')
  })

  it('says a cancelled, replaced or wrong link is not valid', async () => {
    const user = await userWithoutPassword()
    const first = await inviteAndReadToken(user)
    await inviteAndReadToken(user, {}, true)
    for (const url of [
      `/invitations/accept?token=${first}`,
      '/invitations/accept?token=nonsense',
      '/invitations/accept',
    ]) {
      const page = await t.request('GET', url)
      expect(page.status).toBe(404)
      expect(page.body).toContain('This invitation link is not valid')
    }
    const posted = await postForm({
      token: first,
      password: 'a long password',
      passwordConfirmation: 'a long password',
    })
    expect(posted.status).toBe(404)
  })
})

describe('rate limits', () => {
  it('allows 5 invitation e-mails an hour to one user, then 429 with Retry-After', async () => {
    const user = await userWithoutPassword()
    await inviteAndReadToken(user)
    for (let i = 0; i < 4; i++) {
      const resend = await t.request('PUT', `/v1/tenants/${f.tenant.id}/users/${user.id}`, {
        token: f.token,
        body: { status: 'invited' },
      })
      expect(resend.status).toBe(200)
    }
    const limited = await t.request('PUT', `/v1/tenants/${f.tenant.id}/users/${user.id}`, {
      token: f.token,
      body: { status: 'invited' },
    })
    expect(limited.status).toBe(429)
    expect(limited.body.error.reason).toBe('rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    t.clock.advance(3_600_000)
    expect(
      (
        await t.request('PUT', `/v1/tenants/${f.tenant.id}/users/${user.id}`, {
          token: f.token,
          body: { status: 'invited' },
        })
      ).status,
    ).toBe(200)
  })

  it('counts each new invitation as it is written: of 8 concurrent ones to one user, 5 are stored, 3 get 429 and write nothing', async () => {
    const user = await userWithoutPassword()
    const tenants = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const created = await t.request('POST', '/v1/tenants', {
          token: f.token,
          body: { name: uniqueName(), regionId: REGION_ID },
        })
        expect(created.status).toBe(201)
        return created.body.result as { id: string }
      }),
    )
    const answers = await Promise.all(
      tenants.map((each) =>
        t.request('POST', `/v1/tenants/${each.id}/users`, {
          token: f.token,
          body: { email: user.email, roleId: ROLE_IDS.agent, status: 'invited' },
        }),
      ),
    )
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429, 429])
    const refused = answers.filter((a) => a.status === 429)
    for (const answer of refused) {
      expect(answer.body.error.reason).toBe('rate_limited')
      expect(answer.body.error.message).toMatch(/invitation e-mails an hour/)
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0)
    }
    // the refused ones left no membership, no mail and no event behind
    const memberships = await t.ctx.db
      .selectFrom('tenant_users')
      .select('tenant_id')
      .where('user_id', '=', user.id)
      .execute()
    expect(memberships).toHaveLength(5)
    const events = await t.ctx.db
      .selectFrom('audit_events')
      .select('id')
      .where('action', '=', 'membership.invited')
      .where('target_id', '=', user.id)
      .execute()
    expect(events).toHaveLength(5)
    const mails = await t.ctx.db
      .selectFrom('outbox')
      .select('id')
      .where('kind', '=', 'invitation_email')
      .where(({ ref }) => ref('payload', '->>').key('userId'), '=', user.id)
      .execute()
    expect(mails).toHaveLength(5)
  })

  it('stops an address after 30 failed look-ups, even for a good token, and not other addresses', async () => {
    const user = await userWithoutPassword()
    const invitationToken = await inviteAndReadToken(user)
    const from = (address: string, tokenValue: string) =>
      t.app.inject({ method: 'GET', url: `/v1/invitations/${tokenValue}`, remoteAddress: address })
    const wrong = Buffer.alloc(32, 9).toString('base64url')
    for (let i = 0; i < 30; i++) expect((await from('203.0.113.7', wrong)).statusCode).toBe(404)
    const limited = await from('203.0.113.7', invitationToken)
    expect(limited.statusCode).toBe(429)
    expect(limited.json().error.reason).toBe('rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect((await from('203.0.113.8', invitationToken)).statusCode).toBe(200)
  })
})
