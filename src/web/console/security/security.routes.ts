import { Type } from 'typebox'
import type { paths } from '../../../../generated/openapi.js'
import { ROLE_IDS } from '../../../access/permissions.js'
import { Uuid } from '../../../http/schemas.js'
import type { TypedApp } from '../../../http/typed-app.js'
import type { Errors } from '../kit/forms.js'
import { Done, Form, Query, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { called, notFound } from '../kit/refusals.js'
import { seal, unseal } from '../kit/sealed.js'
import { PASSKEY_SCRIPTS, passkeyAnswerOf } from '../kit/second-factor.js'
import { platformSecurityRoutes } from './platform-security.routes.js'
import {
  type Factor,
  passkeyBody,
  qrCodeSvg,
  type RecoveryCodes,
  recoveryCodesBody,
  removeFactorBody,
  SECURITY_NOTICES,
  securityBody,
  totpBody,
} from './security.views.js'

const HERE = '/console/security'
const crumbs = (last?: string): [string, string | undefined][] => [
  ['Security', last ? HERE : undefined],
  ...(last ? ([[last, undefined]] as [string, undefined][]) : []),
]

/** An authenticator app being added, as its page carries it sealed to the session until a code confirms it. */
interface Enrolment {
  id: string
  secret: string
  qrSvg?: string | undefined
}
const ENROLMENT = 'totp-enrolment'
/** A pending app counts for nothing and is gone after 10 minutes (docs/security.md). */
const ENROLMENT_TTL_MS = 10 * 60_000

/** A passkey's registration as the API takes it (what @simplewebauthn/browser's startRegistration made). */
type PasskeyRegistration =
  paths['/v1/me/factors/webauthn']['post']['requestBody']['content']['application/json']['response']

const FactorPath = Type.Object({ factorId: Uuid() })
const SessionPath = Type.Object({ sessionId: Uuid() })

/**
 * The person's own security (docs/console.md "Security"): their second factors — an authenticator app
 * added with its QR code and confirmed with a code (no JavaScript needed), a passkey (needs it), removal —,
 * recovery codes shown once with a download, and their sessions with "Sign out" on each and "Sign out
 * everywhere else". Every change goes through the API as the person; the sensitive ones (a factor added to
 * an account that has one, removed, new recovery codes) may ask for a step-up first (kit/step-up.ts).
 */
export function securityRoutes(router: TypedApp, pages: ConsolePages): void {
  const { keys, clock } = pages.ctx
  platformSecurityRoutes(router, pages)

  async function securityPage(signed: Signed, notice?: string, errors?: Errors): Promise<PageResult> {
    const [factors, sessions] = await Promise.all([
      called(signed.api.GET('/v1/me/factors')),
      called(signed.api.GET('/v1/me/sessions')),
    ])
    const { list, recovery } = factorsOf(factors.data.result)
    return [
      200,
      signed.page(
        { title: 'Security', area: 'security', crumbs: crumbs(), scripts: PASSKEY_SCRIPTS },
        securityBody({
          email: signed.login.username,
          factors: list,
          recovery,
          sessions: sessions.data.result,
          platformAdministrator: signed.login.platformRoleId === ROLE_IDS.platformAdministrator,
          form: signed.form,
          notice,
          errors,
        }),
      ),
    ]
  }

  router.get(HERE, { schema: { hide: true, querystring: Query({ done: Done }) } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) =>
      securityPage(signed, SECURITY_NOTICES[request.query.done ?? '']),
    ),
  )

  // An authenticator app: the API makes the key and its QR code; the page shows them with the code field.
  const totpSchema = { hide: true, body: Form({ name: Typed() }) }
  router.post(`${HERE}/totp`, { schema: totpSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const name = (request.body.name ?? '').trim()
      const { data } = await called(signed.api.POST('/v1/me/factors/totp', { body: name ? { name } : {} }), {
        form: (errors) => securityPage(signed, undefined, errors),
      })
      const { id, secret, qrSvg } = data.result
      return totpPage(signed, { id, secret, qrSvg })
    }),
  )

  function totpPage(signed: Signed, enrolment: Enrolment, errors?: Errors): PageResult {
    const session = signed.sessionBinding
    const until = new Date(clock.now().getTime() + ENROLMENT_TTL_MS)
    return [
      200,
      signed.page(
        { title: 'Add an authenticator app', area: 'security', crumbs: crumbs('Add an authenticator app') },
        totpBody({
          qrSvg: qrCodeSvg(enrolment.qrSvg),
          secret: enrolment.secret,
          enrolment: seal(keys, ENROLMENT, session, enrolment, until),
          token: signed.form(),
          errors,
        }),
      ),
    ]
  }

  const confirmSchema = { hide: true, body: Form({ enrolment: Typed(32_768), code: Typed(64) }) }
  router.post(`${HERE}/totp/confirm`, { schema: confirmSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const enrolment = unseal<Enrolment>(
        keys,
        ENROLMENT,
        signed.sessionBinding,
        request.body.enrolment,
        clock.now(),
      )
      if (!enrolment)
        return securityPage(signed, undefined, {
          _: 'The authenticator app was not confirmed within 10 minutes: add it again.',
        })
      const code = (request.body.code ?? '').replace(/\s/g, '')
      if (!code) return totpPage(signed, enrolment, { code: 'is required' })
      await called(
        signed.api.POST('/v1/me/factors/{factorId}/verify', {
          params: { path: { factorId: enrolment.id } },
          body: { code },
        }),
        {
          form: () =>
            totpPage(signed, enrolment, {
              code: 'is not right: enter the code your authenticator app shows now',
            }),
          formCodes: [400, 401, 409],
        },
      )
      return { redirect: `${HERE}?done=app-added` }
    }),
  )

  // A passkey: the API's creation options on a page whose script asks the browser, then the answer back.
  router.post(`${HERE}/passkey/new`, { schema: { hide: true, body: Form({}) } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => passkeyPage(signed)),
  )

  async function passkeyPage(signed: Signed, problem?: string): Promise<PageResult> {
    const { data } = await called(signed.api.POST('/v1/me/factors/webauthn/options'))
    return [
      200,
      signed.page(
        {
          title: 'Add a passkey',
          area: 'security',
          crumbs: crumbs('Add a passkey'),
          scripts: PASSKEY_SCRIPTS,
        },
        passkeyBody({ options: data.result as Record<string, unknown>, token: signed.form(), problem }),
      ),
    ]
  }

  const passkeySchema = { hide: true, body: Form({ name: Typed(), webauthn: Typed(16_384) }) }
  router.post(`${HERE}/passkey`, { schema: passkeySchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const name = (request.body.name ?? '').trim()
      // The browser's answer, as the API takes it: the API checks every part of it (400 naming `response`).
      const response = passkeyAnswerOf(request.body.webauthn) as PasskeyRegistration | undefined
      if (!response) return passkeyPage(signed, 'The browser did not make a passkey. Try again.')
      await called(
        signed.api.POST('/v1/me/factors/webauthn', {
          headers: { 'idempotency-key': signed.formId },
          body: { ...(name ? { name } : {}), response },
        }),
        {
          form: (errors) =>
            passkeyPage(signed, `The passkey was not added: ${Object.values(errors).join(' ')} Try again.`),
        },
      )
      return { redirect: `${HERE}?done=passkey-added` }
    }),
  )

  // Removing a factor: a confirmation page, then the API (a step-up operation).
  const readFactor = async (signed: Signed, factorId: string) => {
    const { data } = await called(signed.api.GET('/v1/me/factors'))
    const { list } = factorsOf(data.result)
    const factor = list.find((f) => f.id === factorId)
    if (!factor) throw notFound('factor_not_found', 'No such second factor on your account')
    return { factor, last: list.length === 1 }
  }
  router.get(
    `${HERE}/factors/:factorId/remove`,
    { schema: { hide: true, params: FactorPath } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { factor, last } = await readFactor(signed, request.params.factorId)
        return [
          200,
          signed.page(
            { title: 'Remove a second factor', area: 'security', crumbs: crumbs('Remove a second factor') },
            removeFactorBody({ factor, token: signed.form(), last }),
          ),
        ]
      }),
  )
  const removeSchema = { hide: true, params: FactorPath, body: Form({}) }
  router.post(`${HERE}/factors/:factorId/remove`, { schema: removeSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      await called(
        signed.api.DELETE('/v1/me/factors/{factorId}', {
          params: { path: { factorId: request.params.factorId } },
        }),
        {
          form: (errors) => securityPage(signed, undefined, { _: Object.values(errors).join(' ') }),
          formCodes: [409],
        },
      )
      return { redirect: `${HERE}?done=removed` }
    }),
  )

  // Recovery codes: a new set, shown once (the page is not cached), with a download.
  router.post(`${HERE}/recovery-codes`, { schema: { hide: true, body: Form({}) } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { data } = await called(
        signed.api.POST('/v1/me/recovery-codes', { headers: { 'idempotency-key': signed.formId } }),
      )
      return [
        200,
        signed.page(
          { title: 'Your new recovery codes', area: 'security', crumbs: crumbs('Recovery codes') },
          recoveryCodesBody({ codes: data.result.codes, email: signed.login.username }),
        ),
      ]
    }),
  )

  // Sessions: one signed out, or every one but this.
  const signOutSchema = { hide: true, params: SessionPath, body: Form({}) }
  router.post(`${HERE}/sessions/:sessionId/sign-out`, { schema: signOutSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      await called(
        signed.api.DELETE('/v1/me/sessions/{sessionId}', {
          params: { path: { sessionId: request.params.sessionId } },
        }),
      )
      return { redirect: `${HERE}?done=signed-out#sessions` }
    }),
  )
  router.post(
    `${HERE}/sessions/sign-out-others`,
    { schema: { hide: true, body: Form({}) } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        await called(signed.api.DELETE('/v1/me/sessions'))
        return { redirect: `${HERE}?done=others-signed-out#sessions` }
      }),
  )
}

/** The factors the person can remove, and the recovery codes' count, from `GET /v1/me/factors`. */
function factorsOf(result: readonly unknown[]): { list: Factor[]; recovery: RecoveryCodes | undefined } {
  const list: Factor[] = []
  let recovery: RecoveryCodes | undefined
  for (const item of result as (Factor & { remaining?: number; total?: number })[]) {
    if (item.type === 'recovery') recovery = { remaining: item.remaining ?? 0, total: item.total }
    else list.push(item)
  }
  return { list, recovery }
}
