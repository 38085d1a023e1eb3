import { Type } from 'typebox'
import { Uuid } from '../../../http/schemas.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { ChosenId, Cursor, Done, Form, OneOf, Query, TenantPath, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { personName } from '../kit/readable.js'
import { ifMatch } from '../kit/record-edits.js'
import { called } from '../kit/refusals.js'
import { roleChoices } from '../kit/tenant-scope.js'
import { inviteRoutes } from './invite.routes.js'
import { memberCrumbs, tenantWithPermissions } from './member-scope.js'
import { type Member, memberBody, membersBody, STATUS_FILTERS } from './members.views.js'

const PAGE_SIZE = 50

/** A member's path: the tenant, and the person by their user id. */
const MemberPath = Type.Object({ tenantId: Uuid(), memberId: Uuid() })
/** The list's filters: a status ('' is every status), a search, the page. */
const MembersQuery = Query({ status: OneOf(['', ...STATUS_FILTERS]), q: Typed(), cursor: Cursor, done: Done })

/** Members and invitations of a tenant (docs/console.md "Members"). */
export function memberRoutes(router: TypedApp, pages: ConsolePages): void {
  const now = () => pages.ctx.clock.now()

  inviteRoutes(router, pages)

  const listSchema = { hide: true, params: TenantPath, querystring: MembersQuery }
  router.get('/console/tenants/:tenantId/members', { schema: listSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params
      const found = await tenantWithPermissions(signed, tenantId)
      const status = request.query.status || undefined
      const q = (request.query.q ?? '').trim()
      const cursor = request.query.cursor || undefined
      const { data } = await called(
        signed.api.GET('/v1/tenants/{tenantId}/users', {
          params: {
            path: { tenantId },
            query: {
              ...(status ? { status } : {}),
              ...(q ? { q } : {}),
              limit: PAGE_SIZE,
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      )
      return [
        200,
        signed.page(
          { title: `Members of ${found.tenant.name}`, area: 'tenants', crumbs: memberCrumbs(found.tenant) },
          membersBody({
            tenant: found.tenant,
            members: data.result,
            status: status ?? '',
            q,
            now: now(),
            canManage: found.permissions.has('MANAGE_TENANT_ENROLLMENT'),
            form: signed.form,
            nextCursor: data.nextCursor,
            notice: request.query.done || undefined,
          }),
        ),
      ]
    }),
  )

  async function memberPage(
    signed: Signed,
    tenantId: string,
    memberId: string,
    errors?: Record<string, string>,
    status = 200,
  ): Promise<PageResult> {
    const found = await tenantWithPermissions(signed, tenantId)
    const { data, response } = await called(
      signed.api.GET('/v1/tenants/{tenantId}/users/{userId}', {
        params: { path: { tenantId, userId: memberId } },
      }),
    )
    const m: Member = data.result
    const name = personName(m)
    return [
      status,
      signed.page(
        {
          title: name,
          area: 'tenants',
          crumbs: memberCrumbs(found.tenant, name),
        },
        memberBody({
          tenant: found.tenant,
          member: m,
          roles: await roleChoices(signed, found.tenant),
          token: signed.form(),
          version: response.headers.get('etag') ?? '',
          now: now(),
          form: signed.form,
          canManage: found.permissions.has('MANAGE_TENANT_ENROLLMENT'),
          errors,
        }),
      ),
    ]
  }

  const member = (path: string) => `/console/tenants/:tenantId/members/:memberId${path}`
  const listOf = (tenantId: string, done: string) =>
    `/console/tenants/${tenantId}/members?done=${encodeURIComponent(done)}`

  router.get(member(''), { schema: { hide: true, params: MemberPath } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) =>
      memberPage(signed, request.params.tenantId, request.params.memberId),
    ),
  )

  const roleSchema = { hide: true, params: MemberPath, body: Form({ roleId: ChosenId }) }
  router.post(member('/role'), { schema: roleSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId, memberId } = request.params
      const roleId = request.body.roleId
      if (!roleId) return memberPage(signed, tenantId, memberId, { roleId: 'is required' })
      const { data } = await called(
        signed.api.PUT('/v1/tenants/{tenantId}/users/{userId}', {
          params: { path: { tenantId, userId: memberId } },
          headers: ifMatch(request.body.version),
          body: { roleId },
        }),
        {
          changed: { what: 'membership', href: `/console/tenants/${tenantId}/members/${memberId}` },
          form: (errors) => memberPage(signed, tenantId, memberId, errors),
          formCodes: [400],
        },
      )
      return { redirect: listOf(tenantId, `Role changed for ${data.result.email}`) }
    }),
  )

  const said = {
    invited: 'Invitation sent to',
    pending: 'Invitation cancelled for',
    accepted: 'Member now:',
    disabled: 'Disabled:',
  }
  const statusSchema = { hide: true, params: MemberPath, body: Form({ status: Type.Enum(STATUS_FILTERS) }) }
  router.post(member('/status'), { schema: statusSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId, memberId } = request.params
      const { status } = request.body
      const { data } = await called(
        signed.api.PUT('/v1/tenants/{tenantId}/users/{userId}', {
          params: { path: { tenantId, userId: memberId } },
          body: { status },
        }),
      )
      return { redirect: listOf(tenantId, `${said[status]} ${data.result.email}`) }
    }),
  )

  router.post(
    member('/remove'),
    { schema: { hide: true, params: MemberPath, body: Form({}) } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, memberId } = request.params
        await called(
          signed.api.DELETE('/v1/tenants/{tenantId}/users/{userId}', {
            params: { path: { tenantId, userId: memberId } },
          }),
        )
        return { redirect: listOf(tenantId, 'Removed from the tenant') }
      }),
  )
}
