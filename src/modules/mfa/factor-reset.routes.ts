import { Type } from 'typebox'
import type { RouteModule } from '../../http/typed-app.js'
import { UserParams } from '../users/users.schemas.js'
import { resetUserFactors } from './factor-reset.service.js'

/** An administrator's reset of a person's second factors (docs/security.md, "An administrator's reset"). */
export const factorResetRoutes: RouteModule = async (app, ctx) => {
  const sessions = app.authenticator.sessions

  app.delete(
    '/users/:userId/factors',
    {
      schema: {
        tags: ['factors'],
        operationId: 'resetUserFactors',
        summary: 'Reset a person’s second factors',
        description:
          'Removes every second factor (authenticator apps, passkeys) and recovery code of the person, ends ' +
          'every session of theirs and e-mails them that an administrator did it; one `user.mfa_reset` event. ' +
          'Needs MANAGE_ALL_USERS over that user (its platform role, or effective in a tenant where it is a ' +
          'member) and every role the user holds within the caller’s platform permissions (403 ' +
          'role_exceeds_caller), as for any change of that user; never oneself (409 self_lockout). A step-up ' +
          'operation: a caller with a second factor needs one from the last 10 minutes (401 ' +
          'reauthentication_required with the challenge to answer at POST /v1/tokens/step-up).',
        errors: [
          'user_not_found',
          'permission_denied',
          'role_exceeds_caller',
          'self_lockout',
          'reauthentication_required',
        ],
        params: UserParams,
        response: {
          204: Type.Null({ description: 'Every factor gone, every session ended, the person told' }),
        },
      },
    },
    async (request, reply) => {
      await resetUserFactors(ctx, sessions, request.actor, request.params.userId)
      return reply.code(204).send(null)
    },
  )
}
