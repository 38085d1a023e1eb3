import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { AcceptInvitationBody, InvitationSchema, InvitationTokenParams } from './acceptance.schemas.js'
import { acceptInvitation, describeInvitation } from './acceptance.service.js'
import { MembershipSchema } from './memberships.schemas.js'

const tags = ['memberships']

/**
 * The acceptance API behind the page (docs/api.md#tenant-users-and-invitations). Public: the token is the credential. 404 for a
 * cancelled, replaced, used, wrong or malformed token; 410 for an expired one.
 */
export const acceptanceRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/invitations/:token',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'getInvitation',
        summary: 'What an invitation link is for: tenant, role, e-mail, expiry, whether a password is needed',
        description:
          'No credentials: the token is the credential. 404 for a cancelled, replaced, used or wrong token; ' +
          '410 once expired. Look-ups are rate limited per address.',
        errors: ['invitation_not_found', 'invitation_expired', 'rate_limited'],
        security: [],
        params: InvitationTokenParams,
        response: { 200: Result(InvitationSchema) },
      },
    },
    async (request) => ({ result: await describeInvitation(ctx, request.params.token, request.ip) }),
  )

  app.post(
    '/invitations/:token/accept',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'acceptInvitation',
        summary: 'Accept an invitation, setting a password (and names) when the user has none',
        description:
          'No credentials: the token is the credential. The membership becomes accepted; a user without a ' +
          'password must set one here. 404 for a cancelled, replaced, used or wrong token; 410 once expired.',
        errors: ['invitation_not_found', 'invitation_expired', 'rate_limited'],
        security: [],
        params: InvitationTokenParams,
        body: AcceptInvitationBody,
        response: { 200: Result(MembershipSchema) },
      },
    },
    async (request) => ({
      result: await acceptInvitation(ctx, request.params.token, request.body ?? {}, {
        address: request.ip,
        requirePassword: true,
      }),
    }),
  )
}
