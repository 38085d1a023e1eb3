import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import { Result, TenantParams } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { acceptInvitation } from './acceptance.service.js'
import { removeTenantUser, updateTenantUser } from './membership-update.js'
import {
  CreateTenantUserBody,
  ListTenantUsersQuery,
  TenantUserParams,
  TenantUserSchema,
  UpdateTenantUserBody,
  type UpdateTenantUserInput,
} from './memberships.schemas.js'
import { createTenantUser, getTenantUser, listTenantUsers } from './memberships.service.js'

const tags = ['tenant users']

/** Tenant users: invitations and memberships (SPEC §4.3, API.md §4.4). */
export const membershipRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tenants/:tenantId/users',
    {
      schema: {
        tags,
        summary: 'Invite a user to a tenant (pending, invited with an e-mail, or accepted at once)',
        params: TenantParams,
        body: CreateTenantUserBody,
        response: { 201: Result(TenantUserSchema) },
      },
    },
    async (request, reply) => {
      const user = await createTenantUser(ctx, request.actor, request.params.tenantId, request.body)
      return reply
        .code(201)
        .header('location', `/v1/tenants/${user.tenantId}/users/${user.userId}`)
        .send({ result: user })
    },
  )

  app.get(
    '/tenants/:tenantId/users',
    {
      schema: {
        tags,
        summary: 'List the users of a tenant, whatever their invitation status',
        params: TenantParams,
        querystring: ListTenantUsersQuery,
        response: {
          200: Type.Object({
            result: Type.Array(TenantUserSchema),
            nextCursor: Type.Optional(Type.String()),
          }),
        },
      },
    },
    async (request) => {
      const page = await listTenantUsers(ctx, request.actor, request.params.tenantId, request.query)
      return { result: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
    },
  )

  app.get(
    '/tenants/:tenantId/users/:userId',
    {
      schema: {
        tags,
        summary: 'Get a user of a tenant',
        params: TenantUserParams,
        response: { 200: Result(TenantUserSchema) },
      },
    },
    async (request) => ({
      result: await getTenantUser(ctx, request.actor, request.params.tenantId, request.params.userId),
    }),
  )

  app.put(
    '/tenants/:tenantId/users/:userId',
    {
      // Existing clients accept an invitation here with `Authorization: Token <invitation token>`.
      config: { auth: 'invitation' },
      schema: {
        tags,
        summary:
          'Change a user of a tenant: send, resend or cancel the invitation, accept, disable, re-enable, ' +
          'change the role or profile. With an invitation token: accept that invitation only.',
        params: TenantUserParams,
        body: UpdateTenantUserBody,
        response: { 200: Result(TenantUserSchema) },
      },
    },
    async (request) => {
      const { tenantId, userId } = request.params
      const body: UpdateTenantUserInput = request.body ?? {}
      if (request.invitation) {
        if (body.status !== 'accepted' || Object.keys(body).length !== 1) {
          throw new AppError(
            'permission_denied',
            'An invitation token can only accept its invitation: send {"status":"accepted"}',
          )
        }
        const accepted = await acceptInvitation(
          ctx,
          request.invitation.token,
          {},
          { address: request.ip, requirePassword: false, expect: { tenantId, userId } },
        )
        return { result: accepted }
      }
      return { result: await updateTenantUser(ctx, request.actor, tenantId, userId, body) }
    },
  )

  app.delete(
    '/tenants/:tenantId/users/:userId',
    {
      schema: {
        tags,
        operationId: 'removeTenantUser',
        summary: 'Remove a user from a tenant (offboarding)',
        description:
          'Needs MANAGE_TENANT_ENROLLMENT in the tenant, and the member’s current role must be within the ' +
          'caller’s permissions there, as for a role change (API.md §14). The user keeps its platform account ' +
          'and other memberships; a pending invitation link dies. 204, no body.',
        params: TenantUserParams,
        response: { 204: Type.Null({ description: 'Removed' }) },
      },
    },
    async (request, reply) => {
      await removeTenantUser(ctx, request.actor, request.params.tenantId, request.params.userId)
      return reply.code(204).send(null)
    },
  )
}
