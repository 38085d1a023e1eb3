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
