import { PageBody, pageBody } from '../../http/pagination.js'
import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { bulkUserForms, registerNdjsonBody } from '../bulk/bulk-forms.js'
import { updateUserById } from './user-update.service.js'
import { CreateUserBody, ListUsersQuery, UpdateUserBody, UserParams, UserSchema } from './users.schemas.js'
import { createUser, getUser, listVisibleUsers } from './users.service.js'

const tags = ['users']

/** Platform users (SPEC §2.2, §4.2, API.md §4.3). */
export const userRoutes: RouteModule = async (app, ctx) => {
  // POST /v1/users takes three body forms: one user (JSON object), a JSON array and an NDJSON stream
  // (API.md §7); the bulk forms are answered by the preValidation hook, documented by bulk-openapi.ts.
  registerNdjsonBody(app)
  app.post(
    '/users',
    {
      schema: {
        tags,
        summary: 'Create a platform user',
        description:
          'Needs MANAGE_ALL_USERS (platform role, or effective in a tenant). roleId and additionalRoleIds must ' +
          'be platform roles within the caller’s own platform permissions (403 role_exceeds_caller).',
        body: CreateUserBody,
        response: { 201: Result(UserSchema) },
      },
      preValidation: bulkUserForms(ctx), // a JSON array or NDJSON body is a bulk load (API.md §7)
    },
    async (request, reply) => {
      const user = await createUser(ctx, request.actor, request.body)
      return reply.code(201).header('location', `/v1/users/${user.id}`).send({ result: user })
    },
  )

  app.get(
    '/users',
    {
      schema: {
        tags,
        summary: 'List the users the caller can read, or find one by e-mail',
        description: 'With ?email=, answers 404 user_not_found when no such user is visible to the caller.',
        querystring: ListUsersQuery,
        response: {
          200: PageBody(UserSchema),
        },
      },
    },
    async (request) => {
      const page = await listVisibleUsers(ctx, request.actor, request.query)
      return pageBody(page)
    },
  )

  app.get(
    '/users/:userId',
    {
      schema: {
        tags,
        summary: 'Get a platform user',
        params: UserParams,
        response: { 200: Result(UserSchema) },
      },
    },
    async (request) => ({ result: await getUser(ctx, request.actor, request.params.userId) }),
  )

  app.put(
    '/users/:userId',
    {
      schema: {
        tags,
        summary: 'Update a platform user (partial)',
        description:
          'A user may change its own firstName, lastName and, with currentPassword, password. Anything else ' +
          'needs MANAGE_ALL_USERS over the user and obeys the role ceiling.',
        params: UserParams,
        body: UpdateUserBody,
        response: { 200: Result(UserSchema) },
      },
    },
    async (request) => ({
      result: await updateUserById(ctx, request.actor, request.params.userId, request.body ?? {}),
    }),
  )
}
