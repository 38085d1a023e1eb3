import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { sameOrigin } from '../kit/form-token.js'
import { type ConsolePages, readCookie } from '../kit/pages.js'

/**
 * What a form token is bound to before sign-in (docs/console.md, "CSRF"): a random value of this browser,
 * in an HttpOnly cookie. A token issued to one browser is refused from any other, so a form token fetched
 * by someone else's browser cannot be replayed in a victim's. SameSite=Lax, not Strict: the console's
 * single sign-on landing page is reached by a redirect from the identity provider's site, and the form it
 * draws must be bound to the value the browser will send back.
 */
export const BROWSER_COOKIE = 'tenantry_console_browser'
const VALUE = /^[A-Za-z0-9_-]{43}$/

/** The binding of a form this browser posted: undefined when it carries no (well-formed) value. */
export function presentedBrowserBinding(request: FastifyRequest): string | undefined {
  const value = readCookie(request.headers.cookie, BROWSER_COOKIE)
  return value && VALUE.test(value) ? `browser:${value}` : undefined
}

/**
 * The binding of a form posted before sign-in, when the console drew it for this browser: the post comes
 * from the console's own origin, carries this browser's value, and its form token was issued to that
 * value. Undefined otherwise, and the caller refuses the form (`pages.refusedForm`, 403).
 */
export function signedOutFormBinding(
  request: FastifyRequest,
  pages: ConsolePages,
  form: Record<string, unknown>,
): string | undefined {
  const binding = presentedBrowserBinding(request)
  if (!sameOrigin(request, pages.ctx.config.publicUrl) || !binding) return undefined
  return pages.tokens.verify(binding, form) ? binding : undefined
}

/** The binding for a form drawn now: this browser's value, or a new one set on the reply. */
export function browserBinding(request: FastifyRequest, reply: FastifyReply, secure: boolean): string {
  const presented = presentedBrowserBinding(request)
  if (presented) return presented
  const value = randomBytes(32).toString('base64url')
  reply.header(
    'set-cookie',
    `${BROWSER_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
  )
  return `browser:${value}`
}
