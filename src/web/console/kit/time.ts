import { html, type SafeHtml } from '../../../html.js'

/**
 * A moment as a person reads it (docs/console.md "Times"): `<time datetime>` holding the UTC instant, its
 * text "2026-11-22 10:15:03 UTC" and the same UTC value as its title (shown on hover). The console's
 * script (kit/assets.ts) rewrites the text into the reader's own time zone, which only the browser knows;
 * without JavaScript the UTC text stays, unambiguous.
 */
export function timeOf(iso: string): SafeHtml {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return html`${iso}`
  const utc = readableUtc(date)
  return html`<time datetime="${date.toISOString()}" title="${utc}" data-local>${utc}</time>`
}

/** "2026-11-22 10:15:03 UTC": sortable, to the second, the zone named. */
export function readableUtc(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`
}
