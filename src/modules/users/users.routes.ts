import { Type } from 'typebox'
import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { bulkUserForms, registerNdjsonBody } from '../bulk/bulk-forms.js'
import { eraseUser } from './user-erasure.service.js'
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
          200: Type.Object({ result: Type.Array(UserSchema), nextCursor: Type.Optional(Type.String()) }),
        },
      },
    },
    async (request) => {
      const page = await listVisibleUsers(ctx, request.actor, request.query)
      return { result: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
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

  app.delete(
    '/users/:userId',
    {
      schema: {
        tags,
        operationId: 'eraseUser',
        summary: 'Erase a person (memberships, keys, tokens and personal data removed; the id stays)',
        description:
          'Needs MANAGE_ALL_USERS in the caller’s platform role; the role ceiling applies and nobody erases ' +
          'themselves (API.md §14). The e-mail becomes free; the record stays as status "erased" so that ' +
          'references and audit events still resolve; personal data inside audit events and queued mail is removed.',
        params: UserParams,
        response: { 204: Type.Null({ description: 'Erased' }) },
      },
    },
    async (request, reply) => {
      await eraseUser(ctx, request.actor, request.params.userId)
      return reply.code(204).send(null)
    },
  )
}
