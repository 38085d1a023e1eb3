import { describe, expect, it } from 'vitest'
import { renderInvitationMail } from '../../src/outbox/mail/invitation-template.js'
import { renderPasswordResetMail } from '../../src/outbox/mail/password-reset-template.js'

/**
 * The mail kit (docs/pages.md): every e-mail in one frame, taking the language and the brand as the
 * page kit does, with today's defaults when none is given.
 */
const invitation = {
  tenantId: 't',
  userId: 'u',
  to: 'ada@example.test',
  tenantName: 'Northwind <Support>',
  roleName: 'Agent',
  inviterName: 'Grace',
  expiresAt: '2026-11-22T10:15:00.000Z',
}
const reset = {
  userId: 'u',
  to: 'ada@example.test',
  expiresAt: '2026-11-22T10:15:00.000Z',
  requestedBy: 'self',
}
const link = 'https://tenantry.example/invitations/accept?token=abc&x=1'

describe('the mail kit', () => {
  it("frames every mail alike with today's defaults: English, the Tenantry colour and name", () => {
    for (const mail of [renderInvitationMail(invitation, link), renderPasswordResetMail(reset, link)]) {
      expect(mail.html.startsWith('<!doctype html>\n<html lang="en" dir="ltr">')).toBe(true)
      expect(mail.html).toContain('background: #1d4ed8')
      expect(mail.html).toContain('href="https://tenantry.example/invitations/accept?token=abc&amp;x=1"')
      expect(mail.text).toContain(`\n${link}\n`)
      expect(mail.text).toContain('The link works once and expires on Sunday, 22 November 2026 at 10:15 UTC.')
    }
    expect(renderPasswordResetMail(reset, link).subject).toBe('Reset your Tenantry password')
  })

  it('takes the language and the brand: lang and dir, the button colour, the name', () => {
    const options = { language: 'he', brand: { name: 'Acme', colour: '#0b6e4f' } }
    const mail = renderPasswordResetMail(reset, link, options)
    expect(mail.html).toContain('<html lang="he" dir="rtl">')
    expect(mail.html).toContain('background: #0b6e4f')
    expect(mail.subject).toBe('Reset your Acme password')
    const odd = renderInvitationMail(invitation, link, { brand: { name: 'Acme', colour: 'url(x)' } })
    expect(odd.html).toContain('background: #1d4ed8')
  })

  it('says what each mail says, every value escaped in the HTML part', () => {
    const mail = renderInvitationMail(invitation, link)
    expect(mail.subject).toBe('You are invited to join Northwind <Support>')
    expect(mail.text).toContain('Grace has invited you to join Northwind <Support> as Agent.')
    expect(mail.html).toContain('<strong>Northwind &lt;Support&gt;</strong>')
    expect(mail.html).toContain('<title>You are invited to join Northwind &lt;Support&gt;</title>')
    expect(mail.text).toContain('If it has expired, ask Grace to send a new invitation.')
  })
})
