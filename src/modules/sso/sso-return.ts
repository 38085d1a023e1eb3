import type { ServiceContext } from '../../context.js'
import { invalidField } from '../../errors.js'

/**
 * Where a browser goes after the identity provider (docs/sso.md §4 and §5). A sign-in's return URL gets
 * the platform token in its fragment, and a browser that is redirected on keeps the fragment when the
 * next address has none: so on this service's own origin only its hand-over pages may receive it — any
 * other page that redirects (`/v1/sso/{another provider}/login` sends the browser to that provider's
 * site) would pass the token on to wherever it points.
 */

function absolute(value: string, origins: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw invalidField('returnTo', `must be an absolute URL on ${origins}`)
  }
  if (url.hash !== '' || url.username || url.password)
    throw invalidField('returnTo', 'must carry no #fragment and no user name or password')
  return url
}

/** The service's pages that take a token from the fragment: /sso/complete and the console's /console/sso. */
function handOverPaths(ctx: ServiceContext): string[] {
  const base = ctx.config.publicUrl
  return [new URL(`${base}/sso/complete`).pathname, new URL(`${base}/console/sso`).pathname]
}

/**
 * A sign-in's return URL: TENANTRY_SSO_RETURN_URL when none is asked; otherwise one of this service's
 * hand-over pages, the configured page itself, or — when the front end has an origin of its own — any
 * page there. Nothing else, so the login cannot be made to send a token to another site.
 */
export function checkReturnTo(ctx: ServiceContext, returnTo: string | undefined): string {
  const configured = ctx.config.ssoReturnUrl
  if (returnTo === undefined || returnTo === '') return configured
  const front = new URL(configured)
  const own = new URL(ctx.config.publicUrl).origin
  const url = absolute(returnTo, front.origin)
  if (url.origin === own) {
    const pages = handOverPaths(ctx)
    if (pages.includes(url.pathname) || (front.origin === own && url.pathname === front.pathname))
      return url.href
    throw invalidField('returnTo', `must be a single sign-on page of this service (${pages.join(' or ')})`)
  }
  if (url.origin !== front.origin) throw invalidField('returnTo', `must be on ${front.origin}`)
  return url.href
}

/**
 * Where a test sign-in's browser is sent once its answer is reported (the console's result page): a page
 * of this service or of the front end's origin. A report, never a token, is behind it.
 */
export function checkTestReturnTo(ctx: ServiceContext, returnTo: string | undefined): string | null {
  if (returnTo === undefined || returnTo === '') return null
  const origins = [
    ...new Set([new URL(ctx.config.publicUrl).origin, new URL(ctx.config.ssoReturnUrl).origin]),
  ]
  const url = absolute(returnTo, origins.join(' or '))
  if (!origins.includes(url.origin)) throw invalidField('returnTo', `must be on ${origins.join(' or ')}`)
  return url.href
}
