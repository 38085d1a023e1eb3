/**
 * Time zones are IANA names. The list comes from the runtime's ICU data; validation also accepts the
 * backward-compatible links (`US/Eastern`, `Asia/Calcutta`) that existing clients send, which ICU
 * resolves but does not list.
 */
/** The shape of an IANA name; the tenant schemas publish it as the pattern of `timezone`. */
export const IANA_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/

let listed: readonly string[] | undefined

export function listTimezones(): readonly string[] {
  listed ??= Object.freeze([...new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])].sort())
  return listed
}

export function isTimezone(name: string): boolean {
  if (!IANA_SHAPE.test(name)) return false
  try {
    // Throws RangeError for a name ICU does not know.
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    return true
  } catch {
    return false
  }
}
