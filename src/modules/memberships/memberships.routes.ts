import { Type } from 'typebox'
import { created } from '../../http/created.js'
import { Result } from '../../http/schemas.js'
import { answerTenantList, answerTenantRecord } from '../../http/tenant-record-answers.js'
import { tenantCreateSchema, tenantListSchema, tenantRecordSchema } from '../../http/tenant-record-schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { unauthorized } from '../auth/unauthorized.js'
import { lookUpResetToken } from '../users/password-reset.service.js'
import { acceptInvitation } from './acceptance.service.js'
import { asksOnlyAcceptance } from './membership-changes.js'
import { removeMembership, updateMembership } from './membership-update.js'
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
const READ = 'Needs VIEW_ALL_USERS or MANAGE_ALL_USERS effective in the tenant.'

/** Memberships: invitations and their members, under /tenants/:tenantId/users (docs/product.md#invitations, docs/api.md#tenant-users-and-invitations). */
export const membershipRoutes: RouteModule = async (app, ctx) => {
  app.post(
    '/tenants/:tenantId/users',
    {
      schema: tenantCreateSchema(
        {
          tags,
          operationId: 'createTenantUser',
          summary: 'Invite a user to a tenant (pending, invited with an e-mail, or accepted at once)',
          description:
            'Needs MANAGE_TENANT_ENROLLMENT effective in the tenant; the role must be within the caller’s own ' +
            'permissions there (403 role_exceeds_caller). An unknown e-mail needs platformRoleId and ' +
            'MANAGE_ALL_USERS to create the platform user too. Invitation e-mails are rate limited per invitee.',
        },
        CreateMembershipBody,
        MembershipSchema,
        ['role_exceeds_caller', 'user_not_found', 'already_member'],
      ),
    },
    async (request, reply) => {
      const user = await createMembership(ctx, request.actor, request.params.tenantId, request.body)
      return created(reply, `/v1/tenants/${user.tenantId}/users/${user.userId}`, user)
    },
  )

  app.get(
    '/tenants/:tenantId/users',
    {
      schema: tenantListSchema(
        {
          tags,
          operationId: 'listTenantUsers',
          summary: 'List the users of a tenant, whatever their invitation status',
          description: READ,
        },
        ListMembershipsQuery,
        MembershipSchema,
      ),
    },
    answerTenantList(ctx, listMemberships),
  )

  app.get(
    '/tenants/:tenantId/users/:userId',
    {
      schema: tenantRecordSchema(
        { tags, operationId: 'getTenantUser', summary: 'Get a user of a tenant', description: READ },
        MembershipParams,
        MembershipSchema,
        'user_not_found',
      ),
    },
    answerTenantRecord(ctx, 'userId', getMembership),
  )

  app.put(
    '/tenants/:tenantId/users/:userId',
    {
      // Existing clients accept an invitation here with `Authorization: Token <invitation token>`.
      config: { auth: 'invitation', ifMatch: 'tenant_users' },
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
        params: MembershipParams,
        body: UpdateMembershipBody,
        response: { 200: Result(MembershipSchema) },
      },
    },
    async (request) => {
      const { tenantId, userId } = request.params
      const body: UpdateMembershipInput = request.body ?? {}
      if (request.invitation) {
        // Judged on what the body changes (docs/api.md#passwords-and-the-existing-clients-flows): the record sent back whole with "accepted" is fine.
        if (!(await asksOnlyAcceptance(ctx.db, tenantId, userId, body))) {
          throw unauthorized('An invitation token can only accept its invitation: send {"status":"accepted"}')
        }
        // A password-reset token is no credential here (docs/api.md#passwords-and-the-existing-clients-flows).
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

  app.delete(
    '/tenants/:tenantId/users/:userId',
    {
      schema: {
        tags,
        operationId: 'removeMembership',
        errors: ['tenant_not_found', 'permission_denied', 'role_exceeds_caller', 'user_not_found'],
        summary: 'Remove a user from a tenant (offboarding)',
        description:
          'Needs MANAGE_TENANT_ENROLLMENT in the tenant, and the member’s current role must be within the ' +
          'caller’s permissions there, as for a role change (docs/product.md#offboarding-and-erasure). The user keeps its platform account ' +
          'and other memberships; a pending invitation link dies. 204, no body.',
        params: MembershipParams,
        response: { 204: Type.Null({ description: 'Removed' }) },
      },
    },
    async (request, reply) => {
      await removeMembership(ctx, request.actor, request.params.tenantId, request.params.userId)
      return reply.code(204).send(null)
    },
  )
}
