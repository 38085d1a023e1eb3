import type { TypedApp } from '../../../http/typed-app.js'
import { apiClient } from '../api/client.js'
import { sameOrigin } from '../kit/form-token.js'
import { Form, OneOf, Query, Typed } from '../kit/inputs.js'
import { type ConsolePages, readCookie, SESSION_COOKIE } from '../kit/pages.js'
import { browserBinding, presentedBrowserBinding } from './browser-binding.js'
import { safeNext } from './next-page.js'
import { emailStep, secondStep } from './sign-in.views.js'
import { ssoSignInRoutes } from './sso-sign-in.routes.js'
import { SESSION_TTL_SECONDS, startSession } from './start-session.js'

const EMAIL = /^[^\s@]+@[^\s@]+$/

/** The page to return to after signing in (checked by next-page.ts) and the note of a sign-out. */
const SignInQuery = Query({ next: Typed(), signedOut: Typed(8) })
/** Both steps' form: the e-mail, then (step "password") the password; `next` carried along. */
const SignInForm = Form({ email: Typed(), password: Typed(), next: Typed(), step: OneOf(['password']) })

/**
 * Sign in (e-mail first, then the password or the tenant's identity providers, docs/console.md) and sign
 * out. The platform token is asked from `POST /v1/tokens` like any client and kept server-side; the
 * browser gets only the session cookie. Single sign-on's start and landing: sso-sign-in.routes.ts.
 */
export function signInRoutes(router: TypedApp, pages: ConsolePages): void {
  const { app, ctx } = pages
  ssoSignInRoutes(router, pages)

  router.get(
    '/console/sign-in',
    { schema: { hide: true, querystring: SignInQuery } },
    async (request, reply) => {
      const nonce = pages.nonce(reply)
      const query = request.query
      const notice = query.signedOut === '1' ? 'You are signed out.' : undefined
      return reply.send(
        emailStep(nonce, {
          token: pages.tokens.issue(browserBinding(request, reply, pages.secure)),
          next: safeNext(query.next),
          ...(notice ? { notice } : {}),
        }),
      )
    },
  )

  router.post('/console/sign-in', { schema: { hide: true, body: SignInForm } }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const form = request.body
    // Before sign-in the form token is bound to this browser's own value: one fetched elsewhere is refused.
    const binding = presentedBrowserBinding(request)
    if (!sameOrigin(request, ctx.config.publicUrl) || !binding || !pages.tokens.verify(binding, form)) {
      return reply.code(403).send(pages.refusedForm(nonce))
    }
    const next = safeNext(form.next)
    const token = pages.tokens.issue(binding)
    const email = (form.email ?? '').trim().toLowerCase()
    if (!EMAIL.test(email)) {
      const reason = email ? 'must be an e-mail address, like name@example.com' : 'is required'
      return reply.send(emailStep(nonce, { token, next, email, errors: { email: reason } }))
    }
    const api = apiClient(app, undefined, request.ip)
    const info = await api.GET('/v1/auth-info/{emailOrTenantId}', {
      params: { path: { emailOrTenantId: email } },
    })
    const { password, identityProviders } = info.data?.result ?? { password: true, identityProviders: [] }
    const step = {
      token,
      next,
      email,
      password,
      providers: identityProviders,
      ssoStart: pages.tokens.issue(binding),
    }
    if (form.step !== 'password' || !password) return reply.send(secondStep(nonce, step))

    const secret = form.password ?? ''
    if (!secret) return reply.send(secondStep(nonce, { ...step, errors: { password: 'is required' } }))
    const issued = await api.POST('/v1/tokens', {
      body: { username: email, password: secret, ttl: SESSION_TTL_SECONDS },
    })
    if (!issued.data) {
      const reason =
        issued.response.status === 429
          ? 'was tried too many times: wait a minute and try again'
          : 'is not right for this e-mail'
      // A form shown again with its errors is a 200: the browser has nothing to report as failed.
      return reply.send(secondStep(nonce, { ...step, errors: { password: reason } }))
    }
    return startSession(pages, request, reply, issued.data.token, SESSION_TTL_SECONDS, next)
  })

  router.post('/console/sign-out', { schema: { hide: true, body: Form({}) } }, async (request, reply) => {
    pages.nonce(reply)
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE)
    const session = cookie ? await pages.sessions.find(cookie, ctx.clock.now()) : undefined
    const form = request.body
    if (session && sameOrigin(request, ctx.config.publicUrl) && pages.tokens.verify(session.idHash, form)) {
      // The API's session ends too (docs/security.md): deleting only the console's row would leave the
      // token it held valid until it expires, and the person's list of sessions would still show it.
      const claims = await pages.app.authenticator.tokenClaims(session.token)
      if (claims?.typ === 'user') {
        await apiClient(pages.app, session.token, request.ip).DELETE('/v1/me/sessions/{sessionId}', {
          params: { path: { sessionId: claims.sessionId } },
        })
      }
      await pages.sessions.delete(session.idHash)
    } else if (session) {
      return reply.code(403).send(pages.refusedForm(pages.nonce(reply)))
    }
    return reply.header('set-cookie', pages.clearedCookie()).redirect('/console/sign-in?signedOut=1', 303)
  })
}
