import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { claimDueRows } from '../../src/outbox/outbox.repository.js'
import { insertUser } from '../helpers/fixtures.js'
import { freePort } from '../helpers/free-port.js'
import { useOutboxFixture } from '../helpers/outbox-fixture.js'
import { invitationLinkIn } from '../helpers/smtp.js'

/**
 * The invitation e-mail and its delivery (docs/api.md#the-invitation-e-mail): the outbox row written with the invitation, the
 * worker that claims it (FOR UPDATE SKIP LOCKED), sends it over a real SMTP server, retries while the
 * server is down, gives up after its attempts, and writes the mail to the log when there is no SMTP.
 */
const f = useOutboxFixture()
const { t, smtpServer, startWorker, stopWorker, invite, outboxRowsFor, emailStatus } = f

describe('the invitation e-mail', () => {
  it('reaches the SMTP server once, addressed to the user, naming tenant, inviter, role, link and expiry', async () => {
    const smtp = await smtpServer()
    const worker = startWorker(smtp.url)
    const user = await insertUser(t.database.handle.db)
    const response = await invite(user.email, 'invited', ROLE_IDS.supervisor)
    expect(response.status).toBe(201)
    const [mail] = await smtp.waitFor(1)
    expect(mail!.envelopeTo).toEqual([user.email])
    expect(mail!.envelopeFrom).toBe('invitations@tenantry.test')
    expect(mail!.headers.to).toContain(user.email)
    expect(mail!.headers['content-type']).toMatch(/^multipart\/alternative/)
    expect(mail!.subject).toBe(`You are invited to join ${f.tenant.name}`)

    const { link, token: invitationToken } = invitationLinkIn(mail!)
    expect(`${link.origin}${link.pathname}`).toBe('http://tenantry.test/invitations/accept')
    // Bootstrap names the first administrator "Platform Administrator": that is the inviter.
    expect(mail!.text).toContain(
      `Platform Administrator has invited you to join ${f.tenant.name} as Supervisor.`,
    )
    const expiry = new Date(response.body.result.invitationExpiryDate)
    const expiryText = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'UTC',
      dateStyle: 'full',
      timeStyle: 'short',
    }).format(expiry)
    expect(mail!.text).toContain(`expires on ${expiryText} UTC`)

    // The HTML part says the same, with every value escaped.
    expect(mail!.html).toContain('Café &lt;i&gt;Ops&lt;/i&gt;')
    expect(mail!.html).not.toContain('<i>Ops</i>')
    expect(mail!.html).toContain(`href="${link.href}"`)
    expect(mail!.html).toContain('Supervisor')
    expect(mail!.html).toContain('Platform Administrator')

    expect((await t.request('GET', `/v1/invitations/${invitationToken}`)).status).toBe(200)
    await expect.poll(() => emailStatus(user.id)).toBe('sent')
    // Exactly one: nothing more goes out on later rounds.
    t.clock.advance(3_600_000)
    expect(await worker.runOnce()).toBe(0)
    expect(smtp.messages).toHaveLength(1)
    await stopWorker(worker)
  })

  it('is not sent for `accepted` or `pending`; a pending user gets one when invited', async () => {
    const smtp = await smtpServer()
    const worker = startWorker(smtp.url)
    const member = await insertUser(t.database.handle.db)
    const pending = await insertUser(t.database.handle.db)
    expect((await invite(member.email, 'accepted')).status).toBe(201)
    const created = await invite(pending.email, 'pending')
    expect(created.body.result.invitationEmailStatus).toBeNull()
    expect(await outboxRowsFor(member.id)).toEqual([])
    expect(await outboxRowsFor(pending.id)).toEqual([])

    const sent = await t.request('PUT', `/v1/tenants/${f.tenant.id}/users/${pending.id}`, {
      token: f.token,
      body: { status: 'invited' },
    })
    expect(sent.status).toBe(200)
    const mails = await smtp.waitForMailTo(pending.email, 1)
    expect(mails).toHaveLength(1)
    expect(smtp.messages.filter((m) => m.envelopeTo.includes(member.email))).toEqual([])
    await stopWorker(worker)
  })

  it('goes to the log, link included, when no SMTP server is configured', async () => {
    const worker = startWorker(undefined)
    expect(worker.mailerKind).toBe('log')
    const user = await insertUser(t.database.handle.db)
    expect((await invite(user.email)).status).toBe(201)
    await expect.poll(() => emailStatus(user.id)).toBe('sent')
    const line = t.logs.find((l) => l.includes(`E-mail to ${user.email}`))
    expect(line).toBeDefined()
    const entry = JSON.parse(line!)
    const message = entry.msg as string
    expect(message).toContain(`Subject: You are invited to join ${f.tenant.name}`)
    const link = /http:\/\/tenantry\.test\/invitations\/accept\?token=([A-Za-z0-9_-]+)/.exec(message)
    expect(link).not.toBeNull()
    // The link also stands alone in the entry, for `jq .mail.links[0]`.
    expect(entry.mail.links).toEqual([link![0]])
    expect((await t.request('GET', `/v1/invitations/${link![1]}`)).status).toBe(200)
    await stopWorker(worker)
  })
})

describe('delivery when things fail', () => {
  it('keeps the mail queued while SMTP is down and delivers it exactly once when it comes up', async () => {
    const port = await freePort()
    const worker = startWorker(`smtp://127.0.0.1:${port}`)
    const user = await insertUser(t.database.handle.db)
    const response = await invite(user.email)
    expect(response.status).toBe(201)
    expect(response.body.result.invitationEmailStatus).toBe('queued')

    // The worker tried, failed, and scheduled a retry with backoff.
    await expect
      .poll(async () => (await outboxRowsFor(user.id))[0]?.last_error ?? null, { timeout: 20_000 })
      .not.toBeNull()
    const [row] = await outboxRowsFor(user.id)
    expect(row).toMatchObject({ status: 'queued', locked_until: null, attempts: 1 })
    expect(row!.last_error).toMatch(/ECONNREFUSED|connect/i)
    expect(row!.next_attempt_at.getTime()).toBeGreaterThan(t.clock.now().getTime())
    expect(await emailStatus(user.id)).toBe('queued')

    const smtp = await smtpServer({ port })
    t.clock.advance(60 * 60_000) // past any backoff
    const mails = await smtp.waitForMailTo(user.email, 1)
    await expect.poll(() => emailStatus(user.id)).toBe('sent')
    t.clock.advance(24 * 60 * 60_000)
    expect(await worker.runOnce()).toBe(0)
    expect(mails).toHaveLength(1)
    expect(smtp.messages.filter((m) => m.envelopeTo.includes(user.email))).toHaveLength(1)
    await stopWorker(worker)
  })

  it('delivers a mail whose worker died after claiming it, once its lease runs out', async () => {
    const smtp = await smtpServer()
    const user = await insertUser(t.database.handle.db)
    expect((await invite(user.email)).status).toBe(201)
    // A worker that claims the row and dies before sending.
    const now = t.clock.now()
    const claimed = await claimDueRows(t.ctx.db, now, new Date(now.getTime() + 120_000), 100)
    expect(claimed.map((r) => (r.payload as { userId: string }).userId)).toContain(user.id)

    const worker = startWorker(smtp.url)
    expect(await worker.runOnce()).toBe(0) // leased to the dead worker
    t.clock.advance(120_001)
    await smtp.waitForMailTo(user.email, 1)
    await expect.poll(() => emailStatus(user.id)).toBe('sent')
    await stopWorker(worker)
  })

  it('marks the mail failed after its last attempt, and at once when the server refuses it for good', async () => {
    const port = await freePort()
    const worker = startWorker(`smtp://127.0.0.1:${port}`, { maxAttempts: 2 })
    const user = await insertUser(t.database.handle.db)
    await invite(user.email)
    await expect
      .poll(async () => (await outboxRowsFor(user.id))[0]?.last_error ?? null, { timeout: 20_000 })
      .not.toBeNull()
    t.clock.advance(60 * 60_000)
    await expect.poll(() => emailStatus(user.id), { timeout: 20_000 }).toBe('failed')
    const [row] = await outboxRowsFor(user.id)
    expect(row!.attempts).toBe(2)
    expect(row!.last_error).toMatch(/^gave up after 2 attempts/)
    expect(row!.payload).not.toHaveProperty('envelope')
    // Given up: an invitation.email_failed event, written with the failed mark (docs/webhooks.md).
    const failedEvents = await t.ctx.db
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'invitation.email_failed')
      .where('target_id', '=', user.id)
      .execute()
    expect(failedEvents).toHaveLength(1)
    expect(failedEvents[0]).toMatchObject({ actor_type: 'system', tenant_id: f.tenant.id })
    await stopWorker(worker)

    // A 5xx answer (no such mailbox) is not retried.
    const refusing = await smtpServer({ rejectRecipients: true })
    const second = startWorker(refusing.url)
    const other = await insertUser(t.database.handle.db)
    await invite(other.email)
    await expect.poll(() => emailStatus(other.id), { timeout: 20_000 }).toBe('failed')
    const [refused] = await outboxRowsFor(other.id)
    expect(refused!.attempts).toBe(1)
    expect(refused!.last_error).toMatch(/550/)
    // A resend is a new mail and a new chance.
    await stopWorker(second)
  })

  it('finishes the mail in hand when stopped', async () => {
    const smtp = await smtpServer({ delayMs: 300 })
    const worker = startWorker(smtp.url)
    const user = await insertUser(t.database.handle.db)
    await invite(user.email)
    await expect.poll(() => smtp.dataReceived).toBe(1)
    await stopWorker(worker)
    expect(smtp.messages.filter((m) => m.envelopeTo.includes(user.email))).toHaveLength(1)
    expect((await outboxRowsFor(user.id))[0]!.status).toBe('sent')
  })
})
