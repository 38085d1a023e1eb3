import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { apiClient } from '../api/client.js'
import { sameOrigin } from '../kit/form-token.js'
import { text } from '../kit/forms.js'
import { type ConsolePages, readCookie, SESSION_COOKIE } from '../kit/pages.js'
import { emailStep, secondStep, ssoLandingPage } from './sign-in.views.js'

/** How long a console session (and the platform token behind it) lives: one working day. */
const SESSION_TTL_SECONDS = 12 * 3600
const EMAIL = /^[^\s@]+@[^\s@]+$/

/** Only a console path may be the page to return to after signing in (no open redirect). */
function safeNext(value: unknown): string {
  const next = text(value)
  return /^\/console(\/[^\s\\]*)?$/.test(next) && !next.startsWith('//') ? next : '/console/tenants'
}

/**
 * Sign in (e-mail first, then the password or the tenant's identity providers, API.md §17) and sign out.
 * The platform token is asked from `POST /v1/tokens` like any client and kept server-side; the browser
 * gets only the session cookie.
 */
export function signInRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const { app, ctx } = pages
  const ssoReturnTo = encodeURIComponent(`${ctx.config.publicUrl}/console/sso`)

  router.get('/console/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const query = request.query as Record<string, unknown>
    const notice = query.signedOut === '1' ? 'You are signed out.' : undefined
    return reply.send(
      emailStep(nonce, {
        token: pages.tokens.issue(''),
        next: safeNext(query.next),
        ...(notice ? { notice } : {}),
      }),
    )
  })

  router.post('/console/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const form = (request.body ?? {}) as Record<string, unknown>
    if (!sameOrigin(request, ctx.config.publicUrl) || !pages.tokens.verify('', form)) {
      return reply.code(403).send(pages.refusedForm(nonce))
    }
    const next = safeNext(form.next)
    const token = pages.tokens.issue('')
    const email = text(form.email).trim().toLowerCase()
    if (!EMAIL.test(email)) {
      const reason = email ? 'must be an e-mail address, like name@example.com' : 'is required'
      return reply.send(emailStep(nonce, { token, next, email, errors: { email: reason } }))
    }
    const api = apiClient(app, undefined, request.ip)
    const info = await api.GET('/v1/auth-info/{emailOrTenantId}', {
      params: { path: { emailOrTenantId: email } },
    })
    const { password, identityProviders } = info.data?.result ?? { password: true, identityProviders: [] }
    const step = { token, next, email, password, providers: identityProviders, ssoReturnTo }
    if (text(form.step) !== 'password' || !password) return reply.send(secondStep(nonce, step))

    const secret = text(form.password)
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
    return startSession(request, reply, issued.data.token, SESSION_TTL_SECONDS, next)
  })

  router.get('/console/sso', { schema: { hide: true } }, async (_request, reply) => {
    const nonce = pages.nonce(reply)
    return reply.send(ssoLandingPage(nonce, pages.tokens.issue('')))
  })

  router.post('/console/sso', { schema: { hide: true } }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const form = (request.body ?? {}) as Record<string, unknown>
    if (!sameOrigin(request, ctx.config.publicUrl) || !pages.tokens.verify('', form)) {
      return reply.code(403).send(pages.refusedForm(nonce))
    }
    const ttl = Math.min(Number(text(form.ttl)) || SESSION_TTL_SECONDS, 7 * 86_400)
    return startSession(request, reply, text(form.token), ttl, '/console/tenants')
  })

  router.post('/console/sign-out', { schema: { hide: true } }, async (request, reply) => {
    pages.nonce(reply)
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE)
    const session = cookie ? await pages.sessions.find(cookie, ctx.clock.now()) : undefined
    const form = (request.body ?? {}) as Record<string, unknown>
    if (session && sameOrigin(request, ctx.config.publicUrl) && pages.tokens.verify(session.idHash, form)) {
      await pages.sessions.delete(session.idHash)
    } else if (session) {
      return reply.code(403).send(pages.refusedForm(pages.nonce(reply)))
    }
    return reply.header('set-cookie', pages.clearedCookie()).redirect('/console/sign-in?signedOut=1', 303)
  })

  /** A token the API accepts becomes a session: the row holds the token, the browser the cookie. */
  async function startSession(
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    ttlSeconds: number,
    next: string,
  ): Promise<FastifyReply> {
    const login = await apiClient(app, token, request.ip).POST('/v1/login')
    if (!login.data) return reply.redirect('/console/sign-in', 303)
    const now = ctx.clock.now()
    const id = await pages.sessions.create(
      login.data.result.userId,
      token,
      now,
      new Date(now.getTime() + ttlSeconds * 1000),
    )
    return reply.header('set-cookie', pages.sessionCookie(id, ttlSeconds)).redirect(next, 303)
  }
}
