import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { CreateUserBody, UserSchema } from '../users/users.schemas.js'
import { createUser } from '../users/users.service.js'
import { bulkUserForms, registerNdjsonBody } from './bulk-forms.js'

/**
 * `POST /v1/users` in its three body forms: one user (a JSON object, the users module's createUser), a
 * JSON array and an NDJSON stream (docs/api.md, "Bulk load of platform users"). The bulk forms are
 * answered by the preValidation hook and documented by bulk-openapi.ts; the route lives here because they
 * are this module's, which builds on the users module (never the other way round).
 */
export const bulkUserRoutes: RouteModule = async (app, ctx) => {
  registerNdjsonBody(app)
  app.post(
    '/users',
    {
      schema: {
        tags: ['users'],
        operationId: 'createUsers',
        summary: 'Create a platform user, or load many (JSON array or NDJSON stream)',
        description:
          'Needs MANAGE_ALL_USERS (platform role, or effective in a tenant). roleId and additionalRoleIds must ' +
          'be platform roles within the caller’s own platform permissions (403 role_exceeds_caller).',
        errors: ['permission_denied', 'role_exceeds_caller', 'email_taken', 'too_many_items'],
        body: CreateUserBody,
        response: { 201: Result(UserSchema) },
      },
      preValidation: bulkUserForms(ctx), // a JSON array or NDJSON body is a bulk load
    },
    async (request, reply) => {
      const user = await createUser(ctx, request.actor, request.body)
      return reply.code(201).header('location', `/v1/users/${user.id}`).send({ result: user })
    },
  )
}
