import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { LoginSchema, TOKEN_TTL, TokenRequestBody, TokenResponse } from './auth.schemas.js'
import { describeLogin } from './auth.service.js'

const tags = ['auth']

/** Tokens and login (docs/api.md#authentication). */
export const authRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tokens',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'createToken',
        summary: 'Exchange a username and password (or API key id and secret) for a token',
        description:
          'No credentials: the body is the credential. The token goes in `Authorization: Bearer <token>`. ' +
          'A user’s token starts a session (GET /v1/me/sessions) and says how it was won (`amr`: `pwd`), when ' +
          '(`auth_time`) and its session (`sid`); an API key’s token has no session. ' +
          'Failed attempts are limited per username and per address (429 with Retry-After). ' +
          'For an account with a second factor a right password answers 401 mfa_required carrying the ' +
          'challenge (`error.mfa`: answer it at POST /v1/tokens/mfa), or — with `code` — the token at once; ' +
          'the token’s `amr` then holds `pwd` and `otp`.',
        errors: ['unauthorized', 'mfa_required', 'rate_limited'],
        security: [],
        body: TokenRequestBody,
        response: { 200: TokenResponse },
      },
    },
    async (request) => {
      const { username, password, ttl = TOKEN_TTL.default, code } = request.body
      const client = { ip: request.ip, userAgent: request.headers['user-agent'] ?? null }
      return { token: await app.authenticator.createToken(username, password, client, ttl, code), ttl }
    },
  )

  app.post(
    '/login',
    {
      schema: {
        tags,
        operationId: 'login',
        summary: "The caller's identity, tenants and effective permissions",
        description:
          'Any authenticated user (no permission needed); an API key gets 403 permission_denied. No body.',
        errors: ['permission_denied'],
        response: { 200: Result(LoginSchema) },
      },
    },
    async (request) => {
      const gate = app.authenticator.secondFactors
      return { result: await describeLogin(ctx, request.actor, gate && ((userId) => gate.hasFactor(userId))) }
    },
  )
}
