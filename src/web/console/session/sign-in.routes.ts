import type { FastifyReply, FastifyRequest } from 'fastify'
import type { paths } from '../../../../generated/openapi.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { apiClient, apiErrorOf, type MfaChallenge } from '../api/client.js'
import { sameOrigin } from '../kit/form-token.js'
import type { Errors } from '../kit/forms.js'
import { Form, OneOf, Query, Typed } from '../kit/inputs.js'
import { type ConsolePages, readCookie, SESSION_COOKIE } from '../kit/pages.js'
import { seal, unseal } from '../kit/sealed.js'
import {
  FACTOR_ANSWER_FIELDS,
  type FactorChallenge,
  type FactorWay,
  factorAnswer,
  passkeyAnswerOf,
  refusedFactor,
  wayOf,
} from '../kit/second-factor.js'
import { browserBinding, signedOutFormBinding } from './browser-binding.js'
import { DEFAULT_NEXT, safeNext } from './next-page.js'
import { emailStep, passkeySignInPage, secondFactorStep, secondStep } from './sign-in.views.js'
import { ssoSignInRoutes } from './sso-sign-in.routes.js'
import { SESSION_TTL_SECONDS, startSession } from './start-session.js'

const EMAIL = /^[^\s@]+@[^\s@]+$/

/** The page to return to after signing in (checked by next-page.ts) and the note of a sign-out. */
const SignInQuery = Query({ next: Typed(), signedOut: Typed(8) })
/** Both steps' form: the e-mail, then (step "password") the password; `next` carried along. */
const SignInForm = Form({ email: Typed(), password: Typed(), next: Typed(), step: OneOf(['password']) })
/**
 * The second step's forms (docs/console.md "Second factors"): the sealed challenge, and the answer — the
 * app's code, a recovery code or a passkey's (`method`) — or which form to show (`show`).
 */
const SecondFactorForm = Form({
  challenge: Typed(32_768),
  ...FACTOR_ANSWER_FIELDS,
})

/** A passkey's assertion as the API takes it (what @simplewebauthn/browser's startAuthentication made). */
type PasskeyAssertion =
  paths['/v1/tokens/passkey']['post']['requestBody']['content']['application/json']['response']

/** A sign-in between its password and its second factor, as the browser carries it sealed. */
interface PendingSignIn extends FactorChallenge {
  /** The API's single-use challenge token (`error.mfa.token`). */
  mfaToken: string
  email: string
  next: string
}
const PENDING = 'sign-in-second-factor'
/** As long as the API's challenge lives. */
const PENDING_TTL_MS = 5 * 60_000

/**
 * Sign in (e-mail first, then the password or the tenant's identity providers, docs/console.md) and sign
 * out. The platform token is asked from `POST /v1/tokens` like any client and kept server-side; the
 * browser gets only the session cookie. Single sign-on's start and landing: sso-sign-in.routes.ts.
 */
/** The sign-in waiting for its second factor, from the API's challenge. */
function pending(mfa: MfaChallenge, email: string, next: string): PendingSignIn {
  return {
    mfaToken: mfa.token,
    factors: mfa.factors,
    ...(mfa.webauthn ? { webauthn: mfa.webauthn } : {}),
    email,
    next,
  }
}

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
      const binding = browserBinding(request, reply, pages.secure)
      return reply.send(
        emailStep(nonce, {
          token: pages.tokens.issue(binding),
          passkey: pages.tokens.issue(binding),
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
    const binding = signedOutFormBinding(request, pages, form)
    if (!binding) return reply.code(403).send(pages.refusedForm(nonce))
    const next = safeNext(form.next)
    const token = pages.tokens.issue(binding)
    const email = (form.email ?? '').trim().toLowerCase()
    if (!EMAIL.test(email)) {
      const reason = email ? 'must be an e-mail address, like name@example.com' : 'is required'
      return reply.send(emailStep(nonce, { token, next, email, errors: { email: reason } }))
    }
    const api = apiClient(app, undefined, request.ip, undefined, request.headers['user-agent'])
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
      const refused = apiErrorOf(issued.error, issued.response.status)
      if (refused.reason === 'mfa_required' && refused.mfa)
        return askSecondFactor(reply, nonce, binding, pending(refused.mfa, email, next))
      const reason =
        issued.response.status === 429
          ? 'was tried too many times: wait a minute and try again'
          : 'is not right for this e-mail'
      // A form shown again with its errors is a 200: the browser has nothing to report as failed.
      return reply.send(secondStep(nonce, { ...step, errors: { password: reason } }))
    }
    return startSession(pages, request, reply, issued.data.token, SESSION_TTL_SECONDS, next)
  })

  /** The second step: the page asking for the factor, every form carrying the sealed sign-in. */
  function askSecondFactor(
    reply: FastifyReply,
    nonce: string,
    binding: string,
    signIn: PendingSignIn,
    o: { way?: string | undefined; errors?: Errors } = {},
  ) {
    const until = new Date(ctx.clock.now().getTime() + PENDING_TTL_MS)
    return reply.send(
      secondFactorStep(nonce, {
        email: signIn.email,
        next: signIn.next,
        challenge: signIn,
        sealed: seal(pages.ctx.keys, PENDING, binding, signIn, until),
        form: () => pages.tokens.issue(binding),
        way: wayOf(signIn, o.way),
        errors: o.errors,
      }),
    )
  }

  const secondFactorSchema = { hide: true, body: SecondFactorForm }
  router.post('/console/sign-in/second-factor', { schema: secondFactorSchema }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const form = request.body
    const binding = signedOutFormBinding(request, pages, form)
    if (!binding) return reply.code(403).send(pages.refusedForm(nonce))
    const signIn = unseal<PendingSignIn>(ctx.keys, PENDING, binding, form.challenge, ctx.clock.now())
    const startAgain = (warning: string, next = signIn?.next ?? DEFAULT_NEXT) =>
      reply.send(emailStep(nonce, { token: pages.tokens.issue(binding), next, warning }))
    if (!signIn)
      return startAgain('This sign-in took longer than 5 minutes or was finished already. Sign in again.')
    if (form.show || !form.method) return askSecondFactor(reply, nonce, binding, signIn, { way: form.show })
    const method = form.method
    const way: FactorWay = method === 'recovery' ? 'recovery' : 'code'
    const given = factorAnswer(method, form)
    if ('errors' in given)
      return askSecondFactor(reply, nonce, binding, signIn, { way, errors: given.errors })
    const api = apiClient(app, undefined, request.ip, undefined, request.headers['user-agent'])
    const answered = await api.POST('/v1/tokens/mfa', {
      body: { mfaToken: signIn.mfaToken, ...given.answer },
    })
    if (answered.data) {
      const { token, ttl } = answered.data
      return startSession(pages, request, reply, token, Math.min(ttl, SESSION_TTL_SECONDS), signIn.next)
    }
    const refused = apiErrorOf(answered.error, answered.response.status)
    // The challenge is spent (used, expired, or five wrong answers): the sign-in starts again. A wrong
    // answer (401 mfa_required naming the field) leaves it alive for another try.
    if (refused.reason === 'unauthorized')
      return startAgain(
        'This sign-in can no longer be finished: it was used, took too long or had too many wrong answers. Sign in again.',
      )
    return askSecondFactor(reply, nonce, binding, signIn, { way, errors: refusedFactor(method, refused) })
  })

  // A passkey alone: the API's request options on a page that asks the browser, then the answer back.
  const PasskeyForm = Form({ next: Typed(), webauthn: Typed(16_384) })
  const passkeyPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    nonce: string,
    binding: string,
    next: string,
    problem?: string,
  ) => {
    const api = apiClient(app, undefined, request.ip, undefined, request.headers['user-agent'])
    const { data } = await api.POST('/v1/tokens/passkey/options', { body: {} })
    if (!data) return reply.send(emailStep(nonce, { token: pages.tokens.issue(binding), next }))
    const options = data.result as Record<string, unknown>
    return reply.send(
      passkeySignInPage(nonce, { token: pages.tokens.issue(binding), next, options, problem }),
    )
  }
  const passkeySchema = { hide: true, body: PasskeyForm }
  router.post('/console/sign-in/passkey', { schema: passkeySchema }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const binding = signedOutFormBinding(request, pages, request.body)
    if (!binding) return reply.code(403).send(pages.refusedForm(nonce))
    return passkeyPage(request, reply, nonce, binding, safeNext(request.body.next))
  })
  router.post('/console/sign-in/passkey/finish', { schema: passkeySchema }, async (request, reply) => {
    const nonce = pages.nonce(reply)
    const binding = signedOutFormBinding(request, pages, request.body)
    if (!binding) return reply.code(403).send(pages.refusedForm(nonce))
    const next = safeNext(request.body.next)
    const response = passkeyAnswerOf(request.body.webauthn)
    if (!response)
      return passkeyPage(
        request,
        reply,
        nonce,
        binding,
        next,
        'The browser did not use a passkey. Try again.',
      )
    const api = apiClient(app, undefined, request.ip, undefined, request.headers['user-agent'])
    const answered = await api.POST('/v1/tokens/passkey', {
      body: { response: response as PasskeyAssertion, ttl: SESSION_TTL_SECONDS },
    })
    if (answered.data) {
      const { token, ttl } = answered.data
      return startSession(pages, request, reply, token, Math.min(ttl, SESSION_TTL_SECONDS), next)
    }
    const problem =
      answered.response.status === 429
        ? 'Too many passkeys were refused: wait a few minutes, then try again.'
        : 'That passkey was not accepted: it may belong to another service or have been removed. Try again, or sign in with your e-mail.'
    return passkeyPage(request, reply, nonce, binding, next, problem)
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
