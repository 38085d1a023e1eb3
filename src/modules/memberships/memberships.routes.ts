import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import { Result, TenantParams } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { acceptInvitation } from './acceptance.service.js'
import { updateTenantUser } from './membership-update.js'
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
const READ = 'Needs VIEW_ALL_USERS or MANAGE_ALL_USERS effective in the tenant.'

/** Tenant users: invitations and memberships (SPEC §4.3, API.md §4.4). */
export const membershipRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tenants/:tenantId/users',
    {
      schema: {
        tags,
        operationId: 'createTenantUser',
        summary: 'Invite a user to a tenant (pending, invited with an e-mail, or accepted at once)',
        description:
          'Needs MANAGE_TENANT_ENROLLMENT effective in the tenant; the role must be within the caller’s own ' +
          'permissions there (403 role_exceeds_caller). An unknown e-mail needs platformRoleId and ' +
          'MANAGE_ALL_USERS to create the platform user too. Invitation e-mails are rate limited per invitee.',
        errors: [
          'tenant_not_found',
          'permission_denied',
          'role_exceeds_caller',
          'user_not_found',
          'already_member',
        ],
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
        operationId: 'listTenantUsers',
        summary: 'List the users of a tenant, whatever their invitation status',
        description: READ,
        errors: ['tenant_not_found', 'permission_denied'],
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
        operationId: 'getTenantUser',
        summary: 'Get a user of a tenant',
        description: READ,
        errors: ['tenant_not_found', 'permission_denied', 'user_not_found'],
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
        operationId: 'updateTenantUser',
        summary: 'Change a user of a tenant: invitation, status, role or profile',
        description:
          'Send, resend or cancel the invitation, accept, disable, re-enable, change the role or profile. ' +
          'Needs MANAGE_TENANT_ENROLLMENT effective in the tenant, within the role ceiling. With ' +
          '`Authorization: Token <invitation token>` (existing clients): only `{"status": "accepted"}`, ' +
          'accepting that invitation.',
        errors: [
          'tenant_not_found',
          'permission_denied',
          'role_exceeds_caller',
          'user_not_found',
          'invalid_state_transition',
          'invitation_not_found',
          'invitation_expired',
        ],
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
}
