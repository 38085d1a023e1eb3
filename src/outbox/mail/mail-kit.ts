import {
  type Brand,
  brandColour,
  DEFAULT_BRAND,
  html,
  languageAttributes,
  type SafeHtml,
} from '../../html.js'

/**
 * The one mail kit (docs/pages.md): every e-mail the service sends is a text part and
 * an HTML part in one frame, in the language and brand it is given (today's defaults when absent). Each
 * mail (invitation-template.ts, password-reset-template.ts) says only what it says; every value is
 * escaped in the HTML part.
 */
export interface RenderedMail {
  subject: string
  text: string
  html: string
}

export interface MailOptions {
  /** The mail's language (a BCP 47 tag) for `<html lang>`; English by default. */
  language?: string | undefined
  brand?: Brand | undefined
}

/** What one e-mail with a one-time link says, from the greeting to the closing note. */
export interface LinkMail {
  subject: string
  /** Why the mail came, as text and as the same words in HTML (names in bold). */
  lead: { text: string; html: SafeHtml }
  /** The link: the button's words, and the sentence before the bare link in the text part. */
  action: { label: string; intro: string; href: string }
  /** Formatted (html.ts formatUtc): "The link works once and expires on …". */
  expires: string
  /** What to do once the link has expired. */
  ifExpired?: string | undefined
  /** The last, quieter paragraph: what to do when the mail was not expected. */
  footnote: string
}

export function renderLinkMail(mail: LinkMail, options: MailOptions = {}): RenderedMail {
  const brand = options.brand ?? DEFAULT_BRAND
  const expiry = `The link works once and expires on ${mail.expires}.`
  const text = [
    'Hello,',
    '',
    mail.lead.text,
    '',
    mail.action.intro,
    mail.action.href,
    '',
    expiry,
    ...(mail.ifExpired ? [mail.ifExpired] : []),
    '',
    mail.footnote,
    '',
  ].join('\n')
  const body = html`<p>Hello,</p>
<p>${mail.lead.html}</p>
<p><a href="${mail.action.href}" style="display: inline-block; padding: 0.6rem 1.2rem; background: ${brandColour(brand)}; color: #ffffff;
text-decoration: none; border-radius: 0.3rem;">${mail.action.label}</a></p>
<p>Or copy this link into your browser:<br><span style="word-break: break-all;">${mail.action.href}</span></p>
<p>${expiry}${
    mail.ifExpired
      ? html`
${mail.ifExpired}`
      : ''
  }</p>
<p style="color: #555555;">${mail.footnote}</p>`
  return { subject: mail.subject, text, html: mailFrame(mail.subject, body, options) }
}

/** The one frame of every e-mail's HTML part: the document, its language and the body's type. */
export function mailFrame(subject: string, body: SafeHtml, options: MailOptions = {}): string {
  const { lang, dir } = languageAttributes(options.language)
  return html`<!doctype html>
<html lang="${lang}" dir="${dir}">
<head><meta charset="utf-8"><title>${subject}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; max-width: 36rem;">
${body}
</body>
</html>
`.value
}
