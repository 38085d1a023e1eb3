import { Type } from 'typebox'
import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { UserParams } from '../users/users.schemas.js'
import { SessionParams, SessionSchema } from './sessions.schemas.js'
import {
  listMySessions,
  revokeMyOtherSessions,
  revokeMySession,
  revokeUserSessions,
} from './sessions.service.js'

const tags = ['sessions']
const revocation =
  'Its tokens are refused (401) at once by this process and within a second by every other; one ' +
  '`session.revoked` event records it.'

/** A person's sessions: one per sign-in, each with its tokens (docs/security.md, "Sessions"). */
export const sessionRoutes: RouteModule = async (app, ctx) => {
  const sessions = app.authenticator.sessions
  // A last use noted but not written yet is written before the process lets its database go.
  app.addHook('onClose', async () => sessions.activity.settled())

  app.get(
    '/me/sessions',
    {
      schema: {
        tags,
        operationId: 'listMySessions',
        summary: "The caller's live sessions, newest first",
        description:
          'Any authenticated person. A session is one sign-in (a password at POST /v1/tokens, or a single sign-on) and every token ' +
          'issued for it; `current` marks the one this request’s token belongs to (none with Basic, which ' +
          'carries no token). An API key has no sessions: 403.',
        errors: ['permission_denied'],
        response: { 200: Result(Type.Array(SessionSchema)) },
      },
    },
    async (request) => ({ result: await listMySessions(ctx, sessions, request.actor) }),
  )

  app.delete(
    '/me/sessions/:sessionId',
    {
      schema: {
        tags,
        operationId: 'revokeMySession',
        summary: 'Sign one of your sessions out (the current one too: that is signing out)',
        description: `Any authenticated person, on its own sessions: another person's, an ended one or an unknown id is 404 session_not_found. ${revocation}`,
        errors: ['session_not_found', 'permission_denied'],
        params: SessionParams,
        response: { 204: Type.Null({ description: 'Signed out' }) },
      },
    },
    async (request, reply) => {
      await revokeMySession(ctx, sessions, request.actor, request.params.sessionId)
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/me/sessions',
    {
      schema: {
        tags,
        operationId: 'revokeMyOtherSessions',
        summary: 'Sign every other session of yours out, keeping this one',
        description: `Any authenticated person. With Basic, which has no session, every session ends. ${revocation}`,
        errors: ['permission_denied'],
        response: { 204: Type.Null({ description: 'Signed out' }) },
      },
    },
    async (request, reply) => {
      await revokeMyOtherSessions(ctx, sessions, request.actor)
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/users/:userId/sessions',
    {
      schema: {
        tags,
        operationId: 'revokeUserSessions',
        summary: 'Sign a person out everywhere',
        description:
          'Needs MANAGE_ALL_USERS over that user (its platform role, or effective in a tenant where it is a ' +
          'member), and every role the user holds within the caller’s platform permissions ' +
          '(403 role_exceeds_caller), as for any change of that user; never oneself (409 self_lockout: ' +
          'DELETE /v1/me/sessions signs one’s other sessions out). Basic credentials are not sessions and ' +
          `keep working. ${revocation}`,
        errors: ['user_not_found', 'permission_denied', 'role_exceeds_caller', 'self_lockout'],
        params: UserParams,
        response: { 204: Type.Null({ description: 'Signed out everywhere' }) },
      },
    },
    async (request, reply) => {
      await revokeUserSessions(ctx, sessions, request.actor, request.params.userId)
      return reply.code(204).send(null)
    },
  )
}
