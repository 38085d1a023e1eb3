/**
 * HTML text escaping for the server-rendered page and the HTML e-mail. Every interpolated value goes
 * through `escapeHtml` (element text and double-quoted attribute values alike), so a tenant or user name
 * holding markup is shown as text.
 */
const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c)
}

/** A tagged template whose interpolations are escaped, unless they are already `SafeHtml`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

type Interpolation = string | number | SafeHtml | readonly SafeHtml[] | null | undefined | false

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? ''
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '')
  })
  return new SafeHtml(out)
}

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map((v: SafeHtml) => v.value).join('')
  return escapeHtml(String(value))
}

// Made once: building an Intl formatter costs far more than formatting with it.
const UTC_FORMAT = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  dateStyle: 'full',
  timeStyle: 'short',
})

/** "Sunday 22 November 2026 at 10:15 UTC": an expiry a person reads, unambiguous about the zone. */
export function formatUtc(date: Date): string {
  return `${UTC_FORMAT.format(date)} UTC`
}

/**
 * Whose pages and e-mails these are: the name a person reads and the colour of links and buttons. Every
 * page (web/kit/frame.ts) and every e-mail (outbox/mail/mail-kit.ts) takes one; today's is DEFAULT_BRAND,
 * a tenant's own comes with per-tenant branding (docs/pages.md).
 */
export interface Brand {
  /** The display name: after each page's title, in the console's header, in the e-mail's frame. */
  name: string
  /** `#rrggbb`; anything else is replaced by the default (it lands in a style and a meta tag). */
  colour: string
}

export const DEFAULT_BRAND: Brand = { name: 'Tenantry', colour: '#1d4ed8' }

const COLOUR = /^#[0-9a-fA-F]{6}$/

export function brandColour(brand: Brand): string {
  return COLOUR.test(brand.colour) ? brand.colour : DEFAULT_BRAND.colour
}

const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/
/** Languages written right to left (their primary subtag), for `dir` beside `lang`. */
const RIGHT_TO_LEFT = new Set(['ar', 'ckb', 'dv', 'fa', 'he', 'ps', 'sd', 'ug', 'ur', 'yi'])

/** `lang` and `dir` of a page or an e-mail in `language` (a BCP 47 tag; anything else reads as English). */
export function languageAttributes(language: string | undefined): { lang: string; dir: 'ltr' | 'rtl' } {
  const lang = language && LANGUAGE_TAG.test(language) ? language : 'en'
  const primary = lang.split('-')[0]!.toLowerCase()
  return { lang, dir: RIGHT_TO_LEFT.has(primary) ? 'rtl' : 'ltr' }
}
