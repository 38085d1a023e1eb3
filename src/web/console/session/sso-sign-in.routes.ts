import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { Type } from 'typebox'
import { Uuid } from '../../../http/schemas.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { Form, Query, Typed } from '../kit/inputs.js'
import { type ConsolePages, readCookie } from '../kit/pages.js'
import { browserBinding, presentedBrowserBinding, signedOutFormBinding } from './browser-binding.js'
import { DEFAULT_NEXT } from './next-page.js'
import { ssoLandingPage, ssoRefusedPage } from './sign-in.views.js'
import { SESSION_TTL_SECONDS, startSession } from './start-session.js'

/**
 * Signing in to the console through a tenant's identity provider (docs/console.md "Sign in"), safe from
 * login CSRF — someone sending a signed-in person a link that swaps their session for the sender's:
 * - "Sign in with …" goes to /console/sso/start/{provider}, which needs this browser's form token, puts a
 *   random nonce in a short-lived HttpOnly cookie and asks the API for a sign-in returning to
 *   /console/sso?attempt=<the nonce's SHA-256>;
 * - /console/sso finishes only that sign-in: the posted attempt must match this browser's nonce (used
 *   once), and the token must be one the single sign-on hand-over issued — a token won with a password
 *   at POST /v1/tokens, which anyone can get for themselves, is refused.
 * SameSite=Lax on the nonce: it is set by a navigation from the console and read by the landing page's
 * post, both this site's own, but the browser arrives at the landing page from the provider's site.
 */
const NONCE_COOKIE = 'tenantry_console_sso'
const NONCE_TTL_SECONDS = 600
const ATTEMPT = /^[A-Za-z0-9_-]{43}$/

/** "Sign in with …": the provider, and this browser's form token in the link's query. */
const StartPath = Type.Object({ providerId: Uuid() })
const StartQuery = Query({ formId: Typed(64), formToken: Typed(128) })
/** The landing page's query and form: the attempt it names, and the token from the URL fragment. */
const LandingQuery = Query({ attempt: Typed(64) })
const LandingForm = Form({ attempt: Typed(64), token: Typed() })

function attemptOf(nonce: string): string {
  return createHash('sha256').update(nonce).digest('base64url')
}

function sameAttempt(expected: string, given: string): boolean {
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}

export function ssoSignInRoutes(router: TypedApp, pages: ConsolePages): void {
  const { ctx } = pages
  const nonceCookie = (value: string, maxAge: number) =>
    `${NONCE_COOKIE}=${value}; Path=/console/sso; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${
      pages.secure ? '; Secure' : ''
    }`

  const startSchema = { hide: true, params: StartPath, querystring: StartQuery }
  router.get('/console/sso/start/:providerId', { schema: startSchema }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const { providerId } = request.params
    const binding = presentedBrowserBinding(request)
    if (!binding || !pages.tokens.verify(binding, request.query))
      return reply.code(403).send(pages.refusedForm(nonce))
    const started = randomBytes(32).toString('base64url')
    const returnTo = `${ctx.config.publicUrl}/console/sso?attempt=${attemptOf(started)}`
    return reply
      .header('set-cookie', nonceCookie(started, NONCE_TTL_SECONDS))
      .redirect(`/v1/sso/${providerId}/login?returnTo=${encodeURIComponent(returnTo)}`, 303)
  })

  router.get(
    '/console/sso',
    { schema: { hide: true, querystring: LandingQuery } },
    async (request, reply) => {
      const nonce = pages.nonce(reply)
      const attempt = request.query.attempt ?? ''
      const token = pages.tokens.issue(browserBinding(request, reply, pages.secure))
      return reply.send(ssoLandingPage(nonce, token, ATTEMPT.test(attempt) ? attempt : ''))
    },
  )

  router.post('/console/sso', { schema: { hide: true, body: LandingForm } }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const form = request.body
    const binding = signedOutFormBinding(request, pages, form)
    if (!binding) return reply.code(403).send(pages.refusedForm(nonce))
    // Used once: whatever this post comes to, the sign-in it names cannot be finished again.
    const started = readCookie(request.headers.cookie, NONCE_COOKIE)
    reply.header('set-cookie', nonceCookie('', 0))
    if (!started || !sameAttempt(attemptOf(started), form.attempt ?? '')) {
      const reason =
        'It was not started from this browser, took longer than 10 minutes, or was already finished.'
      return reply.code(403).send(ssoRefusedPage(nonce, reason))
    }
    const token = form.token ?? ''
    const claims = await pages.app.authenticator.tokenClaims(token)
    // How a token was won is its `amr` (docs/api.md, "Authentication"): `sso` only from the hand-over.
    if (claims?.typ !== 'user' || !claims.authMethods.includes('sso')) {
      const reason = 'Only a sign-in through your organisation’s identity provider is finished here.'
      return reply.code(403).send(ssoRefusedPage(nonce, reason))
    }
    // The session lives as long as the token, and no longer than a password's session.
    const left = claims.exp - Math.floor(ctx.clock.now().getTime() / 1000)
    return startSession(pages, request, reply, token, Math.min(left, SESSION_TTL_SECONDS), DEFAULT_NEXT)
  })
}
