import { DEFAULT_BRAND, formatUtc, html } from '../../html.js'
import { type MailOptions, type RenderedMail, renderLinkMail } from './mail-kit.js'
import type { PasswordResetMailFacts } from './password-reset-mail.js'

/**
 * The password-reset e-mail (docs/api.md#passwords-and-the-existing-clients-flows): who asked, the link and its expiry, and what to do when the
 * reset was not asked for, in the mail kit's frame (mail-kit.ts).
 */
export function renderPasswordResetMail(
  facts: PasswordResetMailFacts,
  link: string,
  options: MailOptions = {},
): RenderedMail {
  const who =
    facts.requestedBy === 'self'
      ? 'Someone (hopefully you) asked to reset the password of this account.'
      : `${facts.requestedBy} asked for the password of this account to be reset.`
  return renderLinkMail(
    {
      subject: `Reset your ${(options.brand ?? DEFAULT_BRAND).name} password`,
      lead: { text: who, html: html`${who}` },
      action: {
        label: 'Choose a new password',
        intro: 'To choose a new password, open this link:',
        href: link,
      },
      expires: formatUtc(new Date(facts.expiresAt)),
      footnote: 'If you did not ask for this, you can ignore this e-mail: your password stays as it is.',
    },
    options,
  )
}
