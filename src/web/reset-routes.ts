import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { ServiceContext } from '../context.js'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../crypto/passwords.js'
import type { Attribute } from '../errors.js'
import type { TypedApp } from '../http/typed-app.js'
import { invitationLimits } from '../modules/memberships/invitation-limits.js'
import {
  lookUpResetToken,
  type ResetLookup,
  resetPasswordWithToken,
} from '../modules/users/password-reset.service.js'
import { PAGE_HEADERS, renderPage } from './layout.js'
import {
  passwordSetPage,
  resetErrorPage,
  resetExpiredPage,
  resetFormPage,
  resetInvalidPage,
  resetTooManyPage,
} from './reset-views.js'

const FORM_LIMIT = 16 * 1024

/**
 * What the page takes: its link's token, and the form's fields — strings, bounded by the form's own size
 * (the page's checks below say what is wrong with a value, beside its field). A link or form this page
 * did not make (a repeated or oversized field) is the page of a link that does not work.
 */
const Field = Type.Optional(Type.String({ maxLength: FORM_LIMIT }))
const LinkQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 1024 })) })
const FormBody = Type.Object({
  token: Field,
  password: Field,
  passwordConfirmation: Field,
})

/**
 * The password-reset page, `{TENANTRY_PUBLIC_URL}/password-reset?token=…` (docs/api.md#passwords-and-the-existing-clients-flows): server-rendered,
 * a plain HTML form that works without JavaScript, posting back to itself. It calls the same service as
 * `PUT /v1/users/{id}` with the reset token, so the rules (once, expiry, newer kills older) are the same.
 * Links that do not work count against the client address like invitation links.
 */
export async function passwordResetPageRoutes(app: TypedApp, ctx: ServiceContext): Promise<void> {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  )

  async function lookUp(token: string, address: string): Promise<ResetLookup> {
    const limits = invitationLimits(ctx)
    await limits.checkLookup(address)
    const lookup = await lookUpResetToken(ctx, token)
    if (!lookup) await limits.recordFailedLookup(address)
    return lookup
  }

  app.setErrorHandler(async (error: FastifyError, _request, reply) => {
    if (!error.validationContext) throw error
    return reply.headers(PAGE_HEADERS).code(404).send(resetInvalidPage())
  })

  app.get(
    '/password-reset',
    { schema: { hide: true, querystring: LinkQuery }, config: { auth: 'public' } },
    async (request, reply) => {
      const token = request.query.token ?? ''
      return render(reply, request, async () => {
        const lookup = await lookUp(token, request.ip)
        if (lookup?.state !== 'live') return unusable(lookup)
        const expiresAt = lookup.user.reset_password_expiry_date?.toISOString() ?? ''
        return [200, resetFormPage({ token, email: lookup.user.email, expiresAt }, PASSWORD_MIN_LENGTH)]
      })
    },
  )

  app.post(
    '/password-reset',
    { schema: { hide: true, body: FormBody }, config: { auth: 'public' } },
    async (request, reply) => {
      const form = request.body
      const token = form.token ?? ''
      return render(reply, request, async () => {
        const lookup = await lookUp(token, request.ip)
        if (lookup?.state !== 'live') return unusable(lookup)
        const password = form.password ?? ''
        const errors: Attribute = {}
        if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
          errors.password = `must be ${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters`
        } else if ((form.passwordConfirmation ?? '') !== password) {
          errors.passwordConfirmation = 'does not match the password'
        }
        if (Object.keys(errors).length > 0) {
          const expiresAt = lookup.user.reset_password_expiry_date?.toISOString() ?? ''
          return [
            400,
            resetFormPage({ token, email: lookup.user.email, expiresAt, errors }, PASSWORD_MIN_LENGTH),
          ]
        }
        const user = await resetPasswordWithToken(ctx, token, password)
        return [200, passwordSetPage(user.email)]
      })
    },
  )

  /** Runs a page handler; the service's refusals become pages, not JSON. */
  function render(reply: FastifyReply, request: FastifyRequest, handler: () => Promise<[number, string]>) {
    return renderPage(reply, request, handler, {
      refusal: (error) => {
        if (error.reason === 'rate_limited') return [429, resetTooManyPage(error.headers?.['retry-after'])]
        if (error.reason === 'reset_token_expired') return [410, resetExpiredPage()]
        if (error.reason === 'unauthorized') return [404, resetInvalidPage()]
        return undefined
      },
      error: resetErrorPage,
      failure: 'password-reset page failed',
    })
  }
}

function unusable(lookup: ResetLookup): [number, string] {
  return lookup?.state === 'expired' ? [410, resetExpiredPage()] : [404, resetInvalidPage()]
}
