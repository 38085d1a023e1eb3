/** A control character or a space: the URL parser would drop or encode it, unseen by the checks. */
const unprintable = (c: string) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f

/** Where a person lands after signing in when nothing else was asked, or what was asked is refused. */
export const DEFAULT_NEXT = '/console/tenants'
const BASE = 'http://console.invalid'

/**
 * The page to return to after signing in (`next`, docs/console.md "Sign in"): a console page, nothing
 * else — no open redirect and no way out of /console to an API route. The path is resolved the way the
 * browser will resolve the redirect (dot segments, percent-encoded ones like `%2e%2e` too) and checked
 * after that. Refused outright: backslashes (browsers read them as slashes), control characters and
 * spaces, anything naming a host (`//host`), and encoded dots, slashes, backslashes or percent signs left
 * in the path — no console path has them, and a server or proxy that decodes once more could climb out.
 */
export function safeNext(value: unknown): string {
  const next = typeof value === 'string' ? value : ''
  if (!next.startsWith('/') || next.includes('\\') || [...next].some(unprintable)) return DEFAULT_NEXT
  let url: URL
  try {
    url = new URL(next, BASE)
  } catch {
    return DEFAULT_NEXT
  }
  if (url.origin !== BASE || /%(2e|2f|5c|25)/i.test(url.pathname)) return DEFAULT_NEXT
  if (url.pathname !== '/console' && !url.pathname.startsWith('/console/')) return DEFAULT_NEXT
  return url.pathname + url.search
}
