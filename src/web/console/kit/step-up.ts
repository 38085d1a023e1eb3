import type { FastifyReply, FastifyRequest } from 'fastify'
import { html } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { apiClient, apiErrorOf, type MfaChallenge, type StepUpRequired } from '../api/client.js'
import type { Errors } from './forms.js'
import { Form, Typed } from './inputs.js'
import type { ConsolePages, PageResult, Signed } from './pages.js'
import { seal, unseal } from './sealed.js'
import {
  FACTOR_ANSWER_FIELDS,
  type FactorChallenge,
  type FactorMethod,
  factorAnswer,
  factorErrorSummary,
  PASSKEY_SCRIPTS,
  refusedFactor,
  secondFactorForms,
  wayOf,
} from './second-factor.js'

/**
 * Step-up in place (docs/console.md "Step-up"): a sensitive operation (an API key, an identity provider,
 * a factor removed, new recovery codes, an erasure, a policy …) that the API answers 401
 * `reauthentication_required` does not end the session. Whichever page's action it was, the console's
 * one error handler draws this page instead: it asks for the second factor (the app's code, a recovery
 * code or a passkey); `POST /v1/tokens/step-up` gives the session a fresh token; and the console then
 * carries on with what the person was doing — it sends the interrupted form again, under the
 * confirming form's id as its Idempotency-Key (the interrupted one's answer, the 401, is what the API
 * keeps for its key) — and answers with that page. The interrupted action travels sealed in the form,
 * bound to the session (kit/sealed.ts): no page names it in a URL, and no other session can send it.
 */
const PURPOSE = 'step-up'
/** How long a step-up page can be answered: the second factor's window. */
const STEP_UP_TTL_MS = 10 * 60_000
const URLENCODED = 'application/x-www-form-urlencoded'

/** What was interrupted, as the page carries it sealed. */
interface Interrupted {
  challenge: FactorChallenge
  /** The console address the person asked for, and the form they sent there (when one can be sent again). */
  url: string
  fields?: [string, string][] | undefined
  /** Where the person was: where a GET or an action that cannot be re-sent goes on from. */
  back: string
}

export const StepUpForm = Form({
  resume: Typed(300_000),
  ...FACTOR_ANSWER_FIELDS,
})

/** The step-up page in place of the page whose API call asked for it (the console's error handler). */
export async function askStepUp(
  pages: ConsolePages,
  request: FastifyRequest,
  reply: FastifyReply,
  asked: StepUpRequired,
): Promise<FastifyReply> {
  const signed = pages.signedOf(request)
  const session = pages.sessionOf(request)
  if (!signed || !session) return pages.signInAgain(request, reply)
  const back = consolePath(request.method === 'GET' ? request.url : request.headers.referer)
  const interrupted: Interrupted = {
    challenge: challengeOf(asked.challenge),
    url: request.url,
    fields: request.method === 'POST' ? formFields(request) : undefined,
    back,
  }
  const resume = seal(pages.ctx.keys, PURPOSE, session.idHash, interrupted, expiry(pages))
  await pages.settle(request)
  reply.header('content-type', 'text/html; charset=utf-8')
  return pages.send(reply, stepUpPage(signed, interrupted, resume))
}

/** The one route the step-up page posts to: its answer, then the interrupted action carried on. */
export function stepUpRoutes(router: TypedApp, pages: ConsolePages): void {
  router.post('/console/step-up', { schema: { hide: true, body: StepUpForm } }, async (request, reply) => {
    const signed = pages.signedOf(request)
    const session = pages.sessionOf(request)
    if (!signed || !session) return pages.signInAgain(request, reply)
    const now = pages.ctx.clock.now()
    const form = request.body
    const interrupted = unseal<Interrupted>(pages.ctx.keys, PURPOSE, session.idHash, form.resume, now)
    if (!interrupted) return pages.send(reply, tooOldPage(signed, consolePath(request.headers.referer)))
    // Sealed again for the page drawn next: its time runs from now.
    const redraw = (errors?: Errors, show?: string) =>
      pages.send(
        reply,
        stepUpPage(
          signed,
          interrupted,
          seal(pages.ctx.keys, PURPOSE, session.idHash, interrupted, expiry(pages)),
          {
            errors,
            show,
          },
        ),
      )
    if (form.show || !form.method) return redraw(undefined, form.show)
    const method: FactorMethod = form.method
    const given = factorAnswer(method, form)
    if ('errors' in given) return redraw(given.errors, method === 'recovery' ? 'recovery' : 'code')
    // Without the page's watch: a wrong answer is a 401 too (reauthentication_required naming the field,
    // with a new challenge), and it must not end the session.
    const api = apiClient(pages.app, session.token, request.ip)
    const mfaToken = 'webauthn' in given.answer && interrupted.challenge.token
    const body = { ...given.answer, ...(mfaToken ? { mfaToken } : {}) }
    const answered = await api.POST('/v1/tokens/step-up', { body })
    if (!answered.data) {
      const refused = apiErrorOf(answered.error, answered.response.status)
      // The session itself is over (revoked, expired, the person disabled): sign in again.
      if (refused.reason === 'unauthorized') return pages.signInAgain(request, reply)
      if (refused.mfa) interrupted.challenge = challengeOf(refused.mfa)
      return redraw(refusedFactor(method, refused), method === 'recovery' ? 'recovery' : 'code')
    }
    await pages.sessions.replaceToken(session.idHash, answered.data.token)
    return carryOn(pages, request, reply, interrupted, signed.formId, session.idHash)
  })
}

/**
 * The interrupted action, sent again as the person's browser sent it — the same console address, the
 * same form — with the confirming form's id and token, through the console itself (its checks, its page),
 * and its answer relayed as this request's. A GET, or a form that cannot be re-sent (a file upload), goes
 * back to where the person was.
 */
async function carryOn(
  pages: ConsolePages,
  request: FastifyRequest,
  reply: FastifyReply,
  interrupted: Interrupted,
  formId: string,
  idHash: string,
): Promise<FastifyReply> {
  await pages.settle(request)
  if (!interrupted.fields) return reply.redirect(interrupted.back, 303)
  const fields = new URLSearchParams(interrupted.fields)
  const token = pages.tokens.tokenFor(idHash, formId)
  fields.set('formId', token.formId)
  fields.set('formToken', token.formToken)
  const userAgent = request.headers['user-agent']
  const answer = await pages.app.inject({
    method: 'POST',
    url: interrupted.url,
    headers: {
      cookie: request.headers.cookie ?? '',
      origin: new URL(pages.ctx.config.publicUrl).origin,
      'content-type': URLENCODED,
      ...(userAgent ? { 'user-agent': userAgent } : {}),
    },
    payload: fields.toString(),
    remoteAddress: request.ip,
  })
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined || NOT_RELAYED.has(name)) continue
    reply.header(name, value)
  }
  return reply.code(answer.statusCode).send(answer.rawPayload)
}

/** Headers of the carried-on answer that belong to its own transfer, not to the page. */
const NOT_RELAYED = new Set(['content-length', 'transfer-encoding', 'connection', 'date', 'keep-alive'])

function stepUpPage(
  signed: Signed,
  interrupted: Interrupted,
  resume: string,
  o: { errors?: Errors | undefined; show?: string | undefined } = {},
): PageResult {
  const { challenge } = interrupted
  const passkey = challenge.factors.includes('webauthn')
  return [
    200,
    signed.page(
      { title: 'Confirm it’s you', ...(passkey ? { scripts: PASSKEY_SCRIPTS } : {}) },
      html`${factorErrorSummary(o.errors)}<h1>Confirm it’s you</h1>
<p>What you asked for needs a second factor from the last 10 minutes. Confirm it’s you and the console
carries on with it; nothing has been changed yet.</p>
${secondFactorForms({
  action: '/console/step-up',
  form: signed.form,
  carry: { resume },
  challenge,
  way: wayOf(challenge, o.show),
  errors: o.errors,
})}
<p><a href="${interrupted.back}">Cancel</a></p>`,
    ),
  ]
}

function tooOldPage(signed: Signed, back: string): PageResult {
  return [
    200,
    signed.page(
      { title: 'Not confirmed' },
      html`<h1>This confirmation is too old</h1>
<div class="notice warning" role="alert"><p>It was not answered within 10 minutes, or it belongs to
another session. Nothing was changed.</p></div>
<p><a href="${back}">Go back</a> and do it again.</p>`,
    ),
  ]
}

function challengeOf(mfa: MfaChallenge): FactorChallenge {
  return { token: mfa.token, factors: mfa.factors, ...(mfa.webauthn ? { webauthn: mfa.webauthn } : {}) }
}

function expiry(pages: ConsolePages): Date {
  return new Date(pages.ctx.clock.now().getTime() + STEP_UP_TTL_MS)
}

/** A posted urlencoded form as its fields, without its id and token (it goes again under new ones). */
function formFields(request: FastifyRequest): [string, string][] | undefined {
  const type = String(request.headers['content-type'] ?? '')
  if (!type.startsWith(URLENCODED) || typeof request.body !== 'object' || request.body === null)
    return undefined
  const fields: [string, string][] = []
  for (const [name, value] of Object.entries(request.body)) {
    if (name === 'formId' || name === 'formToken') continue
    for (const one of Array.isArray(value) ? value : [value])
      if (typeof one === 'string') fields.push([name, one])
  }
  return fields
}

/** The console page an address names (its path and query), else the console's start. */
function consolePath(url: string | undefined): string {
  if (!url) return '/console'
  const parsed = URL.canParse(url, 'http://console.invalid')
    ? new URL(url, 'http://console.invalid')
    : undefined
  const path = parsed ? parsed.pathname + parsed.search : ''
  return /^\/console(\/|$)/.test(path) && !path.includes('..') && !path.includes('//') ? path : '/console'
}
