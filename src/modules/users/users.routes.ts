import { Type } from 'typebox'
import { answerVisibleList, PageBody } from '../../http/pagination.js'
import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { getUserWithToken, type NarrowTokenResolver, updateUserWithToken } from './narrow-credential.js'
import { eraseUser, type StepUpGuard } from './user-erasure.service.js'
import { updateUserById } from './user-update.service.js'
import { ListUsersQuery, UpdateUserBody, UserParams, UserSchema } from './users.schemas.js'
import { getUser, listVisibleUsers } from './users.service.js'

const tags = ['users']
/** What refuses a change to another user or its erasure: the role ceiling and the lockout guards. */
const ACTING_ON_A_USER = [
  'user_not_found',
  'permission_denied',
  'role_exceeds_caller',
  'self_lockout',
  'last_platform_administrator',
] as const

/**
 * Platform users (docs/api.md, "Platform users"). Their creation, in its three body forms, is the bulk
 * module's route (bulk/bulk.routes.ts). `resolveNarrowToken` reads the one-time tokens these routes also
 * take (memberships/narrow-token.ts, handed in by app.ts: see docs/architecture.md).
 */
export function userRoutes(resolveNarrowToken: NarrowTokenResolver, requireStepUp: StepUpGuard): RouteModule {
  return async (app, ctx) => {
    app.get(
      '/users',
      {
        schema: {
          tags,
          operationId: 'listUsers',
          summary: 'List the users the caller can read, or find one by e-mail',
          description:
            'Any authenticated caller: every user with VIEW_ALL_USERS or MANAGE_ALL_USERS in the platform role, ' +
            'otherwise the users of the tenants where it holds one of them (and itself). With ?email=, answers ' +
            '404 user_not_found when no such user is visible to the caller. With ?q=, the visible users whose ' +
            'e-mail or name contains the text (ignoring case), paged like every list.',
          errors: ['user_not_found'],
          querystring: ListUsersQuery,
          response: {
            200: PageBody(UserSchema),
          },
        },
      },
      answerVisibleList(ctx, listVisibleUsers),
    )

    app.get(
      '/users/:userId',
      {
        // The existing admin UI reads the invited user with `Authorization: Token <invitation token>`.
        config: { auth: 'invitation' },
        schema: {
          tags,
          operationId: 'getUser',
          summary: 'Get a platform user',
          description:
            'Anyone may read itself; other users need VIEW_ALL_USERS or MANAGE_ALL_USERS over them. Also ' +
            'accepts `Authorization: Token <invitation token>` or `Token <password-reset token>` for the ' +
            'token’s own user (docs/api.md#passwords-and-the-existing-clients-flows).',
          errors: ['user_not_found'],
          params: UserParams,
          response: { 200: Result(UserSchema) },
        },
      },
      async (request) => {
        if (request.invitation) {
          const credential = await resolveNarrowToken(ctx, request.invitation.token, request.ip)
          return { result: await getUserWithToken(ctx, credential, request.params.userId) }
        }
        return { result: await getUser(ctx, request.actor, request.params.userId) }
      },
    )

    app.put(
      '/users/:userId',
      {
        config: { auth: 'invitation', ifMatch: 'users' },
        schema: {
          tags,
          operationId: 'updateUser',
          summary: 'Update a platform user (partial)',
          errors: ACTING_ON_A_USER,
          description:
            'A user may change its own firstName, lastName, defaultTenant (a tenant where its membership is ' +
            'accepted) and, with currentPassword, password; fields repeating their current value are not ' +
            'changes, and null means empty. Anything else needs MANAGE_ALL_USERS over the user and obeys the ' +
            'role ceiling; `resetPassword: true` e-mails a password-reset link. Nobody disables or demotes ' +
            'themselves (409 self_lockout), and the last Platform Administrator who can sign in is neither ' +
            'disabled nor demoted (409 last_platform_administrator). With `Authorization: Token ' +
            '<password-reset token>`: `{password}` only (the link is spent, earlier access tokens end). With ' +
            '`Token <invitation token>`: firstName, lastName, and password while the user has none. Anything ' +
            'else with either token is 401.',
          params: UserParams,
          body: UpdateUserBody,
          response: { 200: Result(UserSchema) },
        },
      },
      async (request) => {
        const body = request.body ?? {}
        if (request.invitation) {
          const credential = await resolveNarrowToken(ctx, request.invitation.token, request.ip)
          return { result: await updateUserWithToken(ctx, credential, request.params.userId, body) }
        }
        return { result: await updateUserById(ctx, request.actor, request.params.userId, body) }
      },
    )

    app.delete(
      '/users/:userId',
      {
        schema: {
          tags,
          operationId: 'eraseUser',
          errors: [...ACTING_ON_A_USER, 'reauthentication_required'],
          summary: 'Erase a person (memberships, keys, tokens and personal data removed; the id stays)',
          description:
            'Needs MANAGE_ALL_USERS in the caller’s platform role; the role ceiling applies, nobody erases ' +
            'themselves (409 self_lockout) and the last Platform Administrator stays (docs/product.md#offboarding-and-erasure). The e-mail becomes free; the record stays as status "erased" so that ' +
            'references and audit events still resolve; personal data inside audit events and queued mail is removed.' +
            ' A step-up operation for a person with a second factor: without one from the last 10 minutes, 401 reauthentication_required carrying the challenge (docs/security.md, "Step-up").',
          params: UserParams,
          response: { 204: Type.Null({ description: 'Erased' }) },
        },
      },
      async (request, reply) => {
        await eraseUser(ctx, request.actor, request.params.userId, requireStepUp)
        return reply.code(204).send(null)
      },
    )
  }
}
