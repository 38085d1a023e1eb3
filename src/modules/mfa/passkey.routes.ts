import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import { FailureLimiter } from '../../http/rate-limit.js'
import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { TOKEN_TTL, TokenResponse } from '../auth/auth.schemas.js'
import {
  PASSKEY_ADDRESS_LIMIT,
  PASSKEY_OPTIONS_WINDOW_MS,
  passkeySignInOptions,
  signInWithPasskey,
} from './passkey-sign-in.service.js'
import { PasskeyOptionsBody, PasskeySignInBody, RequestOptionsSchema } from './webauthn.schemas.js'

const tags = ['auth']

/** Signing in with a passkey alone (docs/security.md, "Passkeys"), without credentials. */
export const passkeyRoutes: RouteModule = async (app, ctx) => {
  const { limit, windowMs } = PASSKEY_ADDRESS_LIMIT
  const now = () => ctx.clock.now().getTime()
  const deps = {
    sessions: app.authenticator.sessions,
    failuresByAddress: new FailureLimiter(limit, windowMs, now, ctx.counters, 'passkey-address'),
  }
  // Options are asked without credentials and each writes a challenge row (swept after five minutes):
  // counted per client address like the other sign-in look-ups (docs/operations.md, Limits). The default
  // sits far above a floor of people signing in behind one address.
  const optionsLimit = ctx.config.passkeyOptionsLimitPerAddress
  const optionsByAddress =
    optionsLimit > 0
      ? new FailureLimiter(
          optionsLimit,
          PASSKEY_OPTIONS_WINDOW_MS,
          now,
          ctx.counters,
          'passkey-options-address',
        )
      : undefined

  app.post(
    '/tokens/passkey/options',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'createPasskeySignInOptions',
        summary: 'Request options to sign in with a passkey',
        description:
          'No credentials. WebAuthn request options (JSON form) for navigator.credentials.get() ' +
          '(@simplewebauthn/browser startAuthentication): user verification required and an empty ' +
          '`allowCredentials`, so any discoverable passkey of this service may answer. `username` may be sent ' +
          'and changes nothing — the answer is the same for every address, with or without an account. The ' +
          '`challenge` is single use, valid 5 minutes. Counted per client address ' +
          '(TENANTRY_PASSKEY_OPTIONS_LIMIT_PER_ADDRESS, 1,000 per 15 minutes), then 429 with Retry-After.',
        errors: ['rate_limited'],
        security: [],
        body: PasskeyOptionsBody,
        response: { 200: Result(RequestOptionsSchema) },
      },
    },
    async (request) => {
      await optionsByAddress?.take(request.ip)
      return { result: await passkeySignInOptions(ctx) }
    },
  )

  app.post(
    '/tokens/passkey',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'createTokenWithPasskey',
        summary: 'Exchange a passkey’s assertion for a token',
        description:
          'No credentials: the assertion is the credential. Its credential id names the account; a verified ' +
          'passkey with user verification counts as both factors, so the new session’s `amr` is `hwk` (a ' +
          'security key) or `swk` (a synced passkey). A wrong, replayed or expired answer, an unknown passkey, ' +
          'or a disabled or erased person: 401. Wrong answers are limited per client address (100 a minute) ' +
          'and per account with the other second factors (10 in 15 minutes), then 429 with Retry-After. A ' +
          'signature counter that goes backwards is refused and audited (`mfa.passkey_counter_regressed`).',
        errors: ['unauthorized', 'rate_limited'],
        security: [],
        body: PasskeySignInBody,
        response: { 200: TokenResponse },
      },
    },
    async (request) => {
      const client = { ip: request.ip, userAgent: request.headers['user-agent'] ?? null }
      const response = request.body.response as AuthenticationResponseJSON
      const ttl = request.body.ttl ?? TOKEN_TTL.default
      return signInWithPasskey(ctx, deps, response, client, ttl)
    },
  )
}
