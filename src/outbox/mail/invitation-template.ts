import { formatUtc, html } from '../../html.js'
import type { InvitationMailFacts } from './invitation-mail.js'

export interface RenderedMail {
  subject: string
  text: string
  html: string
}

/**
 * The invitation e-mail (API.md §6): text and HTML parts naming the tenant, the inviter, the role, the
 * link and the expiry time. Every value is escaped in the HTML part.
 */
export function renderInvitationMail(facts: InvitationMailFacts, link: string): RenderedMail {
  const expires = formatUtc(new Date(facts.expiresAt))
  const subject = `You are invited to join ${facts.tenantName}`
  const text = [
    'Hello,',
    '',
    `${facts.inviterName} has invited you to join ${facts.tenantName} as ${facts.roleName}.`,
    '',
    'To accept the invitation, open this link:',
    link,
    '',
    `The link works once and expires on ${expires}.`,
    `If it has expired, ask ${facts.inviterName} to send a new invitation.`,
    '',
    'If you were not expecting this invitation, you can ignore this e-mail.',
    '',
  ].join('\n')

  const body = html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${subject}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; max-width: 36rem;">
<p>Hello,</p>
<p><strong>${facts.inviterName}</strong> has invited you to join <strong>${facts.tenantName}</strong>
as <strong>${facts.roleName}</strong>.</p>
<p><a href="${link}" style="display: inline-block; padding: 0.6rem 1.2rem; background: #1d4ed8; color: #ffffff;
text-decoration: none; border-radius: 0.3rem;">Accept the invitation</a></p>
<p>Or copy this link into your browser:<br><span style="word-break: break-all;">${link}</span></p>
<p>The link works once and expires on ${expires}.
If it has expired, ask ${facts.inviterName} to send a new invitation.</p>
<p style="color: #555555;">If you were not expecting this invitation, you can ignore this e-mail.</p>
</body>
</html>
`
  return { subject, text, html: body.value }
}
