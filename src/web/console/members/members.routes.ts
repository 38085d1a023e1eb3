import type { FastifyInstance } from 'fastify'
import { html } from '../../../html.js'
import { apiErrorOf } from '../api/client.js'
import { text } from '../kit/forms.js'
import {
  type ConsolePages,
  changedMeanwhilePage,
  formErrorsOf,
  type PageResult,
  permissionsIn,
  refusalPage,
  type Signed,
} from '../kit/pages.js'
import {
  inviteForm,
  inviteResults,
  type Member,
  memberBody,
  membersBody,
  roleChoices,
  STATUS_FILTERS,
} from './members.views.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const PAGE_SIZE = 50
/** More addresses than this in one paste is a bulk load (`tenantry users import`), not a form. */
const MAX_INVITES = 100
type Status = (typeof STATUS_FILTERS)[number]

/** Members and invitations of a tenant (API.md §17 "Members"). */
export function memberRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const now = () => pages.ctx.clock.now()

  async function tenantOf(signed: Signed, tenantId: string) {
    if (!UUID.test(tenantId))
      return {
        refused: refusalPage(signed, { code: 404, reason: 'tenant_not_found', message: 'No such tenant' }),
      }
    const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}', {
      params: { path: { tenantId } },
    })
    if (!data) return { refused: refusalPage(signed, apiErrorOf(error, response.status)) }
    const t = data.result
    const permissions = permissionsIn(signed, [t.id, ...t.parentIds])
    return { tenant: { id: t.id, name: t.name }, permissions }
  }

  const crumbs = (tenant: { id: string; name: string }, last?: string): [string, string | undefined][] => [
    ['Tenants', '/console/tenants'],
    [tenant.name, `/console/tenants/${tenant.id}`],
    ['Members', last ? `/console/tenants/${tenant.id}/members` : undefined],
    ...(last ? ([[last, undefined]] as [string, undefined][]) : []),
  ]

  router.get('/console/tenants/:tenantId/members', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params as { tenantId: string }
      const query = request.query as Record<string, unknown>
      const found = await tenantOf(signed, tenantId)
      if ('refused' in found) return found.refused as PageResult
      const status = (STATUS_FILTERS as readonly string[]).includes(text(query.status))
        ? (text(query.status) as Status)
        : undefined
      const q = text(query.q).trim()
      // A search reads the whole list and filters it here (the API lists members by status, not by text).
      const cursor = text(query.cursor) || undefined
      const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/users', {
        params: {
          path: { tenantId },
          query: {
            ...(status ? { status } : {}),
            ...(q ? {} : { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
          },
        },
      })
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      const needle = q.toLowerCase()
      const members = q
        ? data.result.filter((m) => `${m.email} ${m.firstName} ${m.lastName}`.toLowerCase().includes(needle))
        : data.result
      const notice = text(query.done) || undefined
      return [
        200,
        signed.page(
          { title: `Members of ${found.tenant.name}`, area: 'tenants', crumbs: crumbs(found.tenant) },
          membersBody({
            tenant: found.tenant,
            members,
            status: status ?? '',
            q,
            now: now(),
            canManage: found.permissions.has('MANAGE_TENANT_ENROLLMENT'),
            form: signed.form,
            nextCursor: q ? undefined : data.nextCursor,
            notice,
          }),
        ),
      ]
    }),
  )

  async function rolesFor(signed: Signed, tenantId: string, permissions: Set<string>) {
    const { data } = await signed.api.GET('/v1/tenants/{tenantId}/roles', { params: { path: { tenantId } } })
    return roleChoices(data?.result ?? [], permissions)
  }

  async function invitePage(
    signed: Signed,
    tenantId: string,
    values = { emails: '', roleId: '', mode: 'invited' },
    errors?: Record<string, string>,
    status = 200,
  ): Promise<PageResult> {
    const found = await tenantOf(signed, tenantId)
    if ('refused' in found) return found.refused as PageResult
    const roles = await rolesFor(signed, tenantId, found.permissions)
    if (!values.roleId)
      values.roleId = roles.find((r) => !r.disabledBecause && r.text === 'Agent')?.value ?? ''
    const title = `Invite people to ${found.tenant.name}`
    return [
      status,
      signed.page(
        {
          title: errors ? `Error: ${title}` : title,
          area: 'tenants',
          crumbs: crumbs(found.tenant, 'Invite'),
        },
        html`<h1>${title}</h1>${inviteForm({ action: `/console/tenants/${tenantId}/members/invite`, token: signed.form(), roles, values, errors })}`,
      ),
    ]
  }

  router.get('/console/tenants/:tenantId/members/invite', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) =>
      invitePage(signed, (request.params as { tenantId: string }).tenantId),
    ),
  )

  router.post('/console/tenants/:tenantId/members/invite', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params as { tenantId: string }
      const form = request.body as Record<string, unknown>
      const values = {
        emails: text(form.emails),
        roleId: text(form.roleId),
        mode: text(form.mode) === 'accepted' ? 'accepted' : 'invited',
      }
      const emails = [
        ...new Set(
          values.emails
            .split(/[\s,;]+/)
            .map((e) => e.trim().toLowerCase())
            .filter(Boolean),
        ),
      ]
      const errors: Record<string, string> = {}
      if (emails.length === 0) errors.emails = 'are required: give at least one'
      else if (emails.length > MAX_INVITES) errors.emails = `are too many: at most ${MAX_INVITES} at once`
      if (!UUID.test(values.roleId)) errors.roleId = 'is required'
      if (Object.keys(errors).length) return invitePage(signed, tenantId, values, errors)
      const found = await tenantOf(signed, tenantId)
      if ('refused' in found) return found.refused as PageResult
      // One call per person, each with its own Idempotency-Key from the form's: a resubmit repeats none.
      const results = []
      for (const [index, email] of emails.entries()) {
        const { data, error, response } = await signed.api.POST('/v1/tenants/{tenantId}/users', {
          params: { path: { tenantId } },
          headers: { 'idempotency-key': `${signed.formId}:${index}` },
          body: { email, roleId: values.roleId, status: values.mode as 'invited' | 'accepted' },
        })
        if (data) {
          results.push({
            email,
            ok: true,
            outcome: values.mode === 'accepted' ? 'Added as a member' : 'Invited: the e-mail is queued',
          })
        } else {
          const refused = apiErrorOf(error, response.status)
          const field = Object.entries(refused.attribute ?? {})
            .map(([f, r]) => `${f} ${r}`)
            .join('; ')
          results.push({ email, ok: false, outcome: `Not done: ${field || refused.message}` })
        }
      }
      return [
        200,
        signed.page(
          {
            title: `Invitations to ${found.tenant.name}`,
            area: 'tenants',
            crumbs: crumbs(found.tenant, 'Invite'),
          },
          inviteResults(found.tenant, results),
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
    const found = await tenantOf(signed, tenantId)
    if ('refused' in found) return found.refused as PageResult
    const read = await readMember(signed, tenantId, userId)
    if ('refused' in read) return read.refused as PageResult
    const m = read.member
    const name = [m.firstName, m.lastName].join(' ').trim() || m.email
    return [
      status,
      signed.page(
        { title: errors ? `Error: ${name}` : name, area: 'tenants', crumbs: crumbs(found.tenant, name) },
        memberBody({
          tenant: found.tenant,
          member: m,
          roles: await rolesFor(signed, tenantId, found.permissions),
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
