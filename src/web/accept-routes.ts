import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { ServiceContext } from '../context.js'
import { PASSWORD_MIN_LENGTH } from '../crypto/passwords.js'
import type { Attribute } from '../errors.js'
import type { TypedApp } from '../http/typed-app.js'
import { compileBodyValidator } from '../http/validation.js'
import {
  AcceptInvitationBody,
  type AcceptInvitationInput,
} from '../modules/memberships/acceptance.schemas.js'
import {
  acceptInvitation,
  type InvitationLookup,
  lookUpInvitation,
  toInvitation,
} from '../modules/memberships/acceptance.service.js'
import { needsPassword } from '../modules/memberships/membership-status.js'
import {
  acceptedPage,
  acceptFormPage,
  errorPage,
  expiredPage,
  invalidLinkPage,
  tooManyAttemptsPage,
  usedPage,
} from './accept-views.js'
import { PAGE_HEADERS, renderPage } from './layout.js'

const validateAccept = compileBodyValidator(AcceptInvitationBody)
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
  firstName: Field,
  lastName: Field,
  password: Field,
  passwordConfirmation: Field,
})

/**
 * The invitation acceptance page, `{TENANTRY_PUBLIC_URL}/invitations/accept?token=…` (docs/api.md#tenant-users-and-invitations):
 * server-rendered, a plain HTML form that works without JavaScript, posting back to itself. It calls the
 * same service functions as the JSON API, so the rules (token once, expiry, password) are the same.
 */
export async function acceptancePageRoutes(app: TypedApp, ctx: ServiceContext): Promise<void> {
  // An HTML form posts urlencoded fields; this parser exists only inside this plugin.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  )
  const ttlHours = Math.round(ctx.config.invitationTtlSeconds / 3600)
  app.setErrorHandler(async (error: FastifyError, _request, reply) => {
    if (!error.validationContext) throw error
    return reply.headers(PAGE_HEADERS).code(404).send(invalidLinkPage())
  })

  app.get(
    '/invitations/accept',
    { schema: { hide: true, querystring: LinkQuery }, config: { auth: 'public' } },
    async (request, reply) => {
      const token = request.query.token ?? ''
      return render(reply, request, async () => {
        const lookup = await lookUpInvitation(ctx, token, request.ip)
        if (lookup.state !== 'live') return unusable(lookup, ttlHours)
        return [200, acceptFormPage({ token, invitation: toInvitation(lookup.row) }, PASSWORD_MIN_LENGTH)]
      })
    },
  )

  app.post(
    '/invitations/accept',
    { schema: { hide: true, body: FormBody }, config: { auth: 'public' } },
    async (request, reply) => {
      const form = request.body
      const token = form.token ?? ''
      return render(reply, request, async () => {
        const lookup = await lookUpInvitation(ctx, token, request.ip)
        if (lookup.state !== 'live') return unusable(lookup, ttlHours)
        const invitation = toInvitation(lookup.row)
        const asksPassword = needsPassword(lookup.row.has_password, lookup.row.no_password)
        const input: AcceptInvitationInput = {}
        const names = { firstName: (form.firstName ?? '').trim(), lastName: (form.lastName ?? '').trim() }
        if (asksPassword) {
          input.password = form.password ?? ''
          if (names.firstName) input.firstName = names.firstName
          if (names.lastName) input.lastName = names.lastName
        }
        const errors: Attribute = { ...validateAccept(input)?.attribute }
        if (asksPassword && input.password === '') errors.password = 'is required'
        if (asksPassword && !errors.password && (form.passwordConfirmation ?? '') !== input.password) {
          errors.passwordConfirmation = 'does not match the password'
        }
        if (Object.keys(errors).length > 0) {
          return [400, acceptFormPage({ token, invitation, errors, ...names }, PASSWORD_MIN_LENGTH)]
        }
        await acceptInvitation(ctx, token, input, { address: request.ip, requirePassword: true })
        return [200, acceptedPage({ ...invitation, passwordSet: asksPassword })]
      })
    },
  )

  /** Runs a page handler; the service's refusals become pages, not JSON. */
  function render(reply: FastifyReply, request: FastifyRequest, handler: () => Promise<[number, string]>) {
    return renderPage(reply, request, handler, {
      refusal: (error) => {
        const retryAfter = error.headers?.['retry-after']
        if (error.reason === 'rate_limited') return [429, tooManyAttemptsPage(retryAfter)]
        if (error.reason === 'invitation_expired') return [410, expiredPage(undefined, ttlHours)]
        if (error.reason === 'invitation_not_found') return [404, invalidLinkPage()]
        return undefined
      },
      error: errorPage,
      failure: 'invitation page failed',
    })
  }
}

function unusable(lookup: Exclude<InvitationLookup, { state: 'live' }>, ttlHours: number): [number, string] {
  switch (lookup.state) {
    case 'expired':
      return [410, expiredPage(lookup.row.invitation_expiry_date?.toISOString(), ttlHours)]
    case 'used':
      return [404, usedPage(lookup.row.tenant_name, lookup.row.email)]
    case 'unknown':
      return [404, invalidLinkPage()]
  }
}
