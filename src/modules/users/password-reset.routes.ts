import { setTimeout as sleep } from 'node:timers/promises'
import { Type } from 'typebox'
import { Email, Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { requestPasswordReset } from './password-reset.service.js'

/**
 * Every answer to a reset request takes at least this long, whether the address is known (a transaction
 * and an outbox row) or not (one look-up): the time tells nobody which addresses have accounts.
 */
export const RESET_REQUEST_FLOOR_MS = 250

const RequestPasswordResetBody = Type.Object(
  { email: Email({ description: 'The account’s e-mail address (any case)' }) },
  {
    additionalProperties: false,
    description: 'Who wants to reset its password',
    examples: [{ email: 'jane.doe@example.com' }],
  },
)

/** `PUT|POST /v1/request-password-reset` (docs/api.md#passwords-and-the-existing-clients-flows), without credentials. */
export const passwordResetRoutes: RouteModule = async (app, ctx) => {
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/request-password-reset',
      config: { auth: 'public' },
      schema: {
        tags: ['users'],
        operationId: method === 'PUT' ? 'requestPasswordReset' : 'requestPasswordResetPost',
        errors: ['rate_limited'],
        summary: 'E-mail a password-reset link',
        description:
          'No credentials. Answers 200 {"result": {}} in the same time whether or not the address names a ' +
          'user; for an existing user who is not disabled, a reset e-mail is queued (outbox) with a link valid ' +
          'TENANTRY_PASSWORD_RESET_TTL seconds (default 3600) that replaces any older link. At most 5 ' +
          'requests an hour per e-mail address and 30 per client address (429 with Retry-After).',
        security: [],
        body: RequestPasswordResetBody,
        response: { 200: Result(Type.Object({})) },
      },
      handler: async (request) => {
        const started = performance.now()
        await requestPasswordReset(ctx, request.body.email, request.ip)
        const left = RESET_REQUEST_FLOOR_MS - (performance.now() - started)
        if (left > 0) await sleep(left)
        return { result: {} }
      },
    })
  }
}
