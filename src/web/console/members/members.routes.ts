import type { FastifyInstance } from 'fastify'
import { apiErrorOf } from '../api/client.js'
import { text } from '../kit/forms.js'
import {
  type ConsolePages,
  changedMeanwhilePage,
  formErrorsOf,
  type PageResult,
  refusalPage,
  type Signed,
} from '../kit/pages.js'
import { personName } from '../kit/readable.js'
import { roleChoices, UUID } from '../kit/tenant-scope.js'
import { inviteRoutes } from './invite.routes.js'
import { memberCrumbs, tenantWithPermissions } from './member-scope.js'
import { type Member, memberBody, membersBody, STATUS_FILTERS } from './members.views.js'

const PAGE_SIZE = 50
type Status = (typeof STATUS_FILTERS)[number]

/** Members and invitations of a tenant (API.md §17 "Members"). */
export function memberRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const now = () => pages.ctx.clock.now()

  inviteRoutes(router, pages)

  router.get('/console/tenants/:tenantId/members', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params as { tenantId: string }
      const query = request.query as Record<string, unknown>
      const found = await tenantWithPermissions(signed, tenantId)
      if ('refused' in found) return found.refused as PageResult
      const status = (STATUS_FILTERS as readonly string[]).includes(text(query.status))
        ? (text(query.status) as Status)
        : undefined
      const q = text(query.q).trim()
      const cursor = text(query.cursor) || undefined
      const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/users', {
        params: {
          path: { tenantId },
          query: {
            ...(status ? { status } : {}),
            ...(q ? { q } : {}),
            limit: PAGE_SIZE,
            ...(cursor ? { cursor } : {}),
          },
        },
      })
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      const members = data.result
      const notice = text(query.done) || undefined
      return [
        200,
        signed.page(
          { title: `Members of ${found.tenant.name}`, area: 'tenants', crumbs: memberCrumbs(found.tenant) },
          membersBody({
            tenant: found.tenant,
            members,
            status: status ?? '',
            q,
            now: now(),
            canManage: found.permissions.has('MANAGE_TENANT_ENROLLMENT'),
            form: signed.form,
            nextCursor: data.nextCursor,
            notice,
          }),
        ),
      ]
    }),
  )

  async function readMember(signed: Signed, tenantId: string, userId: string) {
    if (!UUID.test(userId))
      return {
        refused: refusalPage(signed, { code: 404, reason: 'user_not_found', message: 'No such member' }),
      }
    const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/users/{userId}', {
      params: { path: { tenantId, userId } },
    })
    if (!data) return { refused: refusalPage(signed, apiErrorOf(error, response.status)) }
    return { member: data.result as Member, etag: response.headers.get('etag') ?? '' }
  }

  async function memberPage(
    signed: Signed,
    tenantId: string,
    userId: string,
    errors?: Record<string, string>,
    status = 200,
  ): Promise<PageResult> {
    const found = await tenantWithPermissions(signed, tenantId)
    if ('refused' in found) return found.refused as PageResult
    const read = await readMember(signed, tenantId, userId)
    if ('refused' in read) return read.refused as PageResult
    const m = read.member
    const name = personName(m)
    return [
      status,
      signed.page(
        {
          title: errors ? `Error: ${name}` : name,
          area: 'tenants',
          crumbs: memberCrumbs(found.tenant, name),
        },
        memberBody({
          tenant: found.tenant,
          member: m,
          roles: await roleChoices(signed, found.tenant),
          token: signed.form(),
          version: read.etag,
          now: now(),
          form: signed.form,
          canManage: found.permissions.has('MANAGE_TENANT_ENROLLMENT'),
          errors,
        }),
      ),
    ]
  }

  router.get('/console/tenants/:tenantId/members/:userId', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) => {
      const { tenantId, userId } = request.params as { tenantId: string; userId: string }
      return memberPage(signed, tenantId, userId)
    }),
  )

  router.post(
    '/console/tenants/:tenantId/members/:userId/role',
    { schema: { hide: true } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, userId } = request.params as { tenantId: string; userId: string }
        const form = request.body as Record<string, unknown>
        const roleId = text(form.roleId)
        if (!UUID.test(roleId) || !UUID.test(userId))
          return memberPage(signed, tenantId, userId, { roleId: 'is required' })
        const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}/users/{userId}', {
          params: { path: { tenantId, userId } },
          headers: { 'if-match': text(form.version) || '"none"' },
          body: { roleId },
        })
        if (data)
          return {
            redirect: `/console/tenants/${tenantId}/members?done=${encodeURIComponent(`Role changed for ${data.result.email}`)}`,
          }
        const refused = apiErrorOf(error, response.status)
        if (refused.code === 412)
          return changedMeanwhilePage(signed, 'membership', `/console/tenants/${tenantId}/members/${userId}`)
        if (refused.code === 400) return memberPage(signed, tenantId, userId, formErrorsOf(refused))
        return refusalPage(signed, refused, 'Not allowed')
      }),
  )

  router.post(
    '/console/tenants/:tenantId/members/:userId/status',
    { schema: { hide: true } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, userId } = request.params as { tenantId: string; userId: string }
        const status = text((request.body as Record<string, unknown>).status)
        if (!(STATUS_FILTERS as readonly string[]).includes(status) || !UUID.test(userId)) {
          return refusalPage(signed, { code: 400, reason: 'validation_failed', message: 'Unknown action' })
        }
        const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}/users/{userId}', {
          params: { path: { tenantId, userId } },
          body: { status: status as Status },
        })
        if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
        const said = {
          invited: 'Invitation sent to',
          pending: 'Invitation cancelled for',
          accepted: 'Member now:',
          disabled: 'Disabled:',
        }
        return {
          redirect: `/console/tenants/${tenantId}/members?done=${encodeURIComponent(`${said[status as Status]} ${data.result.email}`)}`,
        }
      }),
  )

  router.post(
    '/console/tenants/:tenantId/members/:userId/remove',
    { schema: { hide: true } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, userId } = request.params as { tenantId: string; userId: string }
        if (!UUID.test(userId))
          return refusalPage(signed, { code: 404, reason: 'user_not_found', message: 'No such member' })
        const { error, response } = await signed.api.DELETE('/v1/tenants/{tenantId}/users/{userId}', {
          params: { path: { tenantId, userId } },
        })
        if (response.status >= 400) return refusalPage(signed, apiErrorOf(error, response.status))
        return {
          redirect: `/console/tenants/${tenantId}/members?done=${encodeURIComponent('Removed from the tenant')}`,
        }
      }),
  )
}
