import { isIP } from 'node:net'
import type { RegistrationResponseJSON } from '@simplewebauthn/server'
import { created } from '../../http/created.js'
import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { FactorSchema } from './mfa.schemas.js'
import { relyingParty } from './webauthn.js'
import { CreationOptionsSchema, PasskeyEnrolmentBody } from './webauthn.schemas.js'
import { enrolPasskey, passkeyCreationOptions } from './webauthn-enrolment.service.js'

const tags = ['factors']
const stepUp =
  'Adding a factor to an account that already has one is a step-up operation: without a second factor ' +
  'from the last 10 minutes, 401 reauthentication_required with the challenge to answer at POST /v1/tokens/step-up.'

/** Enrolling a passkey (docs/security.md, "Passkeys"). */
export const webauthnRoutes: RouteModule = async (app, ctx) => {
  const rp = relyingParty(ctx.config)
  if (isIP(rp.id.replace(/^\[(.*)\]$/, '$1')) !== 0) {
    // Browsers refuse an IP address as a relying party: say so once, where the operator looks.
    ctx.logger.warn(
      { relyingParty: rp.id },
      'TENANTRY_PUBLIC_URL names an IP address: browsers refuse it as a WebAuthn relying party, so passkeys ' +
        'cannot be enrolled or used. Publish the service under a domain name (localhost to try it).',
    )
  }
  app.post(
    '/me/factors/webauthn/options',
    {
      schema: {
        tags,
        operationId: 'createPasskeyOptions',
        summary: 'Creation options to enrol a passkey',
        description:
          'Any authenticated person (an API key: 403). The options, in JSON form, for navigator.credentials.create() ' +
          '(@simplewebauthn/browser startRegistration): relying party the host of the service’s public URL, user ' +
          'verification required, a discoverable credential preferred, the caller’s passkeys excluded. Their ' +
          '`challenge` is single use, bound to the caller and to enrolment, valid 5 minutes; the response sent to ' +
          `POST /v1/me/factors/webauthn echoes it, which is how the service finds it. ${stepUp}`,
        errors: ['permission_denied', 'reauthentication_required'],
        response: { 200: Result(CreationOptionsSchema) },
      },
    },
    async (request) => ({ result: await passkeyCreationOptions(ctx, request.actor) }),
  )

  app.post(
    '/me/factors/webauthn',
    {
      schema: {
        tags,
        operationId: 'enrolPasskey',
        summary: 'Enrol a passkey with the browser’s response',
        description:
          'Any authenticated person. `response` is what startRegistration returned for options from POST ' +
          '/v1/me/factors/webauthn/options. A response to no live enrolment challenge of the caller’s (another ' +
          'person’s, a sign-in’s, a used or expired one), from another origin or relying party, without user ' +
          'verification, or of a passkey already enrolled is 400 naming `response`. Records `mfa.factor_added`. ' +
          stepUp,
        errors: ['permission_denied', 'reauthentication_required'],
        body: PasskeyEnrolmentBody,
        response: { 201: Result(FactorSchema) },
      },
    },
    async (request, reply) => {
      const body = { ...request.body, response: request.body.response as RegistrationResponseJSON }
      const factor = await enrolPasskey(ctx, request.actor, body)
      return created(reply, `/v1/me/factors/${factor.id}`, factor)
    },
  )
}
