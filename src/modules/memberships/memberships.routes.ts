import { PageBody, pageBody } from '../../http/pagination.js'
import { Result, TenantParams } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { unauthorized } from '../auth/authenticator.js'
import { lookUpResetToken } from '../users/password-reset.service.js'
import { acceptInvitation } from './acceptance.service.js'
import { updateMembership } from './membership-update.js'
import {
  CreateMembershipBody,
  ListMembershipsQuery,
  MembershipParams,
  MembershipSchema,
  UpdateMembershipBody,
  type UpdateMembershipInput,
} from './memberships.schemas.js'
import { createMembership, getMembership, listMemberships } from './memberships.service.js'
import { acceptOwnInvitation } from './self-acceptance.js'

const tags = ['memberships']

/** Memberships: invitations and their members, under /tenants/:tenantId/users (SPEC §4.3, API.md §4.4). */
export const membershipRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tenants/:tenantId/users',
    {
      schema: {
        tags,
        summary: 'Invite a user to a tenant (pending, invited with an e-mail, or accepted at once)',
        params: TenantParams,
        body: CreateMembershipBody,
        response: { 201: Result(MembershipSchema) },
      },
    },
    async (request, reply) => {
      const user = await createMembership(ctx, request.actor, request.params.tenantId, request.body)
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
        querystring: ListMembershipsQuery,
        response: {
          200: PageBody(MembershipSchema),
        },
      },
    },
    async (request) => {
      const page = await listMemberships(ctx, request.actor, request.params.tenantId, request.query)
      return pageBody(page)
    },
  )

  app.get(
    '/tenants/:tenantId/users/:userId',
    {
      schema: {
        tags,
        summary: 'Get a user of a tenant',
        params: MembershipParams,
        response: { 200: Result(MembershipSchema) },
      },
    },
    async (request) => ({
      result: await getMembership(ctx, request.actor, request.params.tenantId, request.params.userId),
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
        params: MembershipParams,
        body: UpdateMembershipBody,
        response: { 200: Result(MembershipSchema) },
      },
    },
    async (request) => {
      const { tenantId, userId } = request.params
      const body: UpdateMembershipInput = request.body ?? {}
      if (request.invitation) {
        if (body.status !== 'accepted' || Object.keys(body).length !== 1) {
          throw unauthorized('An invitation token can only accept its invitation: send {"status":"accepted"}')
        }
        // A password-reset token is no credential here (API.md §10).
        if ((await lookUpResetToken(ctx, request.invitation.token)) !== undefined) {
          throw unauthorized('A password-reset token can only set the password of its own user')
        }
        const accepted = await acceptInvitation(
          ctx,
          request.invitation.token,
          {},
          { address: request.ip, requirePassword: false, expect: { tenantId, userId } },
        )
        return { result: accepted }
      }
      const own = await acceptOwnInvitation(ctx, request.actor, tenantId, userId, body)
      return { result: own ?? (await updateMembership(ctx, request.actor, tenantId, userId, body)) }
    },
  )
}
