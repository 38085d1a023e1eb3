import { formatUtc, html } from '../../html.js'
import type { InvitationMailFacts } from './invitation-mail.js'
import { type MailOptions, type RenderedMail, renderLinkMail } from './mail-kit.js'

/**
 * The invitation e-mail (docs/api.md#the-invitation-e-mail): naming the tenant, the inviter, the role, the link and the expiry
 * time, in the mail kit's frame (mail-kit.ts).
 */
export function renderInvitationMail(
  facts: InvitationMailFacts,
  link: string,
  options: MailOptions = {},
): RenderedMail {
  return renderLinkMail(
    {
      subject: `You are invited to join ${facts.tenantName}`,
      lead: {
        text: `${facts.inviterName} has invited you to join ${facts.tenantName} as ${facts.roleName}.`,
        html: html`<strong>${facts.inviterName}</strong> has invited you to join <strong>${facts.tenantName}</strong>
as <strong>${facts.roleName}</strong>.`,
      },
      action: {
        label: 'Accept the invitation',
        intro: 'To accept the invitation, open this link:',
        href: link,
      },
      expires: formatUtc(new Date(facts.expiresAt)),
      ifExpired: `If it has expired, ask ${facts.inviterName} to send a new invitation.`,
      footnote: 'If you were not expecting this invitation, you can ignore this e-mail.',
    },
    options,
  )
}
