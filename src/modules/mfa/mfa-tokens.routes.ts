import type { RouteModule } from '../../http/typed-app.js'
import { TokenResponse } from '../auth/auth.schemas.js'
import { MfaTokenBody, StepUpBody } from './mfa.schemas.js'
import { completeSignIn } from './sign-in.service.js'
import { stepUp } from './step-up.service.js'

const tags = ['auth']
const answer =
  'Exactly one of `code` (the authenticator app’s six digits; each accepted once), `recoveryCode` (each ' +
  'usable once) or `webauthn` (a passkey’s assertion over the challenge’s `webauthn` options). Wrong answers ' +
  'are limited: 5 per challenge, then it is dead; 10 per account in 15 minutes, then 429 with Retry-After ' +
  '(and `mfa.challenge_failed`).'

/** The second step of a sign-in, and step-up (docs/security.md, "Signing in with a second factor", "Step-up"). */
export const mfaTokenRoutes: RouteModule = async (app, ctx) => {
  const sessions = app.authenticator.sessions

  app.post(
    '/tokens/mfa',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'createTokenWithSecondFactor',
        summary: 'Answer the second-factor challenge of a sign-in: the token',
        description:
          `No credentials: \`mfaToken\` is the \`error.mfa.token\` of POST /v1/tokens’s 401 mfa_required (single use, 5 minutes, bound to that account). ${answer} ` +
          'A wrong answer is 401 mfa_required naming the field (the challenge stays while it has answers left); a spent, expired or dead challenge 401 unauthorized: sign in again. ' +
          'The token’s `amr` holds `pwd` and the factor (`otp`, `rec`, `hwk` or `swk`), `auth_time` now.',
        errors: ['validation_failed', 'unauthorized', 'mfa_required', 'rate_limited'],
        security: [],
        body: MfaTokenBody,
        response: { 200: TokenResponse },
      },
    },
    async (request) => {
      const { mfaToken, ...answerGiven } = request.body
      const client = { ip: request.ip, userAgent: request.headers['user-agent'] ?? null }
      return completeSignIn(ctx, sessions, mfaToken, answerGiven, client)
    },
  )

  app.post(
    '/tokens/step-up',
    {
      schema: {
        tags,
        operationId: 'stepUp',
        summary: 'Prove a second factor again: a fresh token of the same session',
        description:
          `Any authenticated person, with the current token. ${answer} The new token belongs to the same session and expires with it; its \`auth_time\` is now and its \`amr\` gains the factor, so step-up operations (docs: Step-up) work for 10 minutes. ` +
          '`mfaToken` (from a 401 reauthentication_required) is needed with `webauthn`. A wrong answer is 401 reauthentication_required naming the field, with a new challenge. Basic and API keys: 403.',
        errors: [
          'validation_failed',
          'unauthorized',
          'reauthentication_required',
          'permission_denied',
          'rate_limited',
        ],
        body: StepUpBody,
        response: { 200: TokenResponse },
      },
    },
    async (request) => stepUp(ctx, sessions, request.actor, request.body),
  )
}
