import { CANONICAL_TIMEZONES, TIMEZONE_LINKS } from './timezone-names.js'

/**
 * Time zones are IANA names, from the fixed list of timezone-names.ts: its canonical names, and the
 * backward-compatible links (`US/Eastern`, `Asia/Calcutta`) that existing clients send.
 */
const ACCEPTED = new Set([...CANONICAL_TIMEZONES, ...TIMEZONE_LINKS])

/**
 * Every accepted name and nothing else, as a pattern: the tenant schemas publish it as the pattern of
 * `timezone` and validate with it, so the document says exactly what the service checks (docs/api.md,
 * Tenants).
 */
export const TIMEZONE_PATTERN = `^(?:${[...ACCEPTED]
  .map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  .join('|')})$`

/** The canonical names, for GET /v1/timezones. */
export function listTimezones(): readonly string[] {
  return CANONICAL_TIMEZONES
}

export function isTimezone(name: string): boolean {
  return ACCEPTED.has(name)
}
