import { Type } from 'typebox'
import { created } from '../../http/created.js'
import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { enrolTotp, listMyFactors, removeMyFactor, verifyTotp } from './factors.service.js'
import {
  FactorParams,
  FactorSchema,
  PendingFactorParams,
  RecoveryCodesSchema,
  TotpEnrolmentBody,
  TotpEnrolmentSchema,
  VerifyFactorBody,
} from './mfa.schemas.js'
import { generateRecoveryCodes } from './recovery.service.js'

const tags = ['second factors']
const stepUp =
  'A step-up operation for an account with an active factor: its token’s second factor must be at most 10 ' +
  'minutes old, else 401 reauthentication_required carrying the challenge (answer it at POST /v1/tokens/step-up).'

/** A person's own second factors (docs/security.md, "Second factors"; docs/api.md). */
export const factorRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/me/factors',
    {
      schema: {
        tags,
        operationId: 'listMyFactors',
        summary: "The caller's second factors, and its recovery codes as one entry",
        description:
          'Any authenticated person, of their own. Active factors, pending authenticator apps (not yet confirmed, gone after 10 minutes), and the ' +
          'recovery codes as `{id: "recovery", type: "recovery", remaining}` when a set exists. An API key: 403.',
        errors: ['permission_denied'],
        response: { 200: Result(Type.Array(FactorSchema)) },
      },
    },
    async (request) => ({ result: await listMyFactors(ctx, request.actor) }),
  )

  app.post(
    '/me/factors/totp',
    {
      schema: {
        tags,
        operationId: 'enrolTotp',
        summary: 'Start adding an authenticator app (TOTP): its key, shown this once',
        description: `Any authenticated person, for themselves. The factor is pending until POST /v1/me/factors/{id}/verify confirms a code, within 10 minutes. When the account already has a factor: ${stepUp}`,
        errors: ['permission_denied', 'reauthentication_required'],
        body: TotpEnrolmentBody,
        response: { 201: Result(TotpEnrolmentSchema) },
      },
    },
    async (request, reply) => {
      const enrolment = await enrolTotp(ctx, request.actor, request.body.name)
      return created(reply, `/v1/me/factors/${enrolment.id}`, enrolment, { secret: true })
    },
  )

  app.post(
    '/me/factors/:factorId/verify',
    {
      schema: {
        tags,
        operationId: 'verifyFactor',
        summary: 'Confirm a pending authenticator app with a code it shows: it becomes active',
        description:
          'Any authenticated person, of their own. A wrong code is 400 naming `code`; an unknown, active or expired pending factor 404 factor_not_found. ' +
          'Writes `mfa.factor_added`.',
        errors: ['validation_failed', 'factor_not_found', 'permission_denied'],
        params: PendingFactorParams,
        body: VerifyFactorBody,
        response: { 200: Result(FactorSchema) },
      },
    },
    async (request) => ({
      result: await verifyTotp(ctx, request.actor, request.params.factorId, request.body.code),
    }),
  )

  app.delete(
    '/me/factors/:factorId',
    {
      schema: {
        tags,
        operationId: 'removeMyFactor',
        summary: 'Remove one of your factors, or (`recovery`) your recovery codes',
        description: `Any authenticated person, of their own. ${stepUp} The last factor cannot go while a policy requires one of you (409 mfa_required_by_policy). Writes \`mfa.factor_removed\`.`,
        errors: [
          'factor_not_found',
          'permission_denied',
          'reauthentication_required',
          'mfa_required_by_policy',
        ],
        params: FactorParams,
        response: { 204: Type.Null({ description: 'Removed' }) },
      },
    },
    async (request, reply) => {
      await removeMyFactor(ctx, request.actor, request.params.factorId)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/me/recovery-codes',
    {
      schema: {
        tags,
        operationId: 'generateRecoveryCodes',
        summary: 'A new set of ten recovery codes, shown this once; the old set stops working',
        description: `Any authenticated person, for themselves. ${stepUp} Each code answers a second-factor challenge once. Writes \`mfa.recovery_codes_generated\`.`,
        errors: ['permission_denied', 'reauthentication_required'],
        response: { 200: Result(RecoveryCodesSchema) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return { result: await generateRecoveryCodes(ctx, _request.actor) }
    },
  )
}
