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
import { readTenantFor, roleChoices, type TenantOf, tenantCrumbs, UUID } from '../kit/tenant-scope.js'
import { scimBody } from './scim.views.js'

/** A tenant's SCIM settings page: base URL, tokens, default role, group → role mapping. */
export function scimRoutes(router: FastifyInstance, pages: ConsolePages): void {
  async function scimPage(
    signed: Signed,
    tenant: TenantOf,
    status = 200,
    errors?: Record<string, string>,
    saved?: string,
  ): Promise<PageResult> {
    const path = { tenantId: tenant.id }
    const [settings, groups, keys, roles] = await Promise.all([
      signed.api.GET('/v1/tenants/{tenantId}/scim', { params: { path } }),
      signed.api.GET('/v1/tenants/{tenantId}/scim/groups', { params: { path } }),
      signed.api.GET('/v1/tenants/{tenantId}/api-keys', { params: { path } }),
      roleChoices(signed, tenant),
    ])
    if (!settings.data) return refusalPage(signed, apiErrorOf(settings.error, settings.response.status))
    return [
      status,
      signed.page(
        {
          title: `SCIM of ${tenant.name}`,
          area: 'tenants',
          crumbs: tenantCrumbs(tenant, ['SCIM', undefined]),
        },
        scimBody({
          tenant,
          baseUrl: settings.data.result.baseUrl,
          defaultRoleId: settings.data.result.defaultRoleId,
          roles,
          tokens: (keys.data?.result ?? []).filter((k) => k.scope === 'scim'),
          groups: groups.data?.result ?? [],
          form: signed.form,
          errors,
          saved,
        }),
      ),
    ]
  }

  router.get('/console/tenants/:tenantId/scim', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as { tenantId: string }).tenantId)
      if ('refused' in read) return read.refused
      const saved = text((request.query as Record<string, unknown>).saved)
      return scimPage(signed, read.tenant, 200, undefined, saved ? 'Saved.' : undefined)
    }),
  )

  router.post('/console/tenants/:tenantId/scim', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as { tenantId: string }).tenantId)
      if ('refused' in read) return read.refused
      const form = request.body as Record<string, unknown>
      const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}/scim', {
        params: { path: { tenantId: read.tenant.id } },
        body: { defaultRoleId: text(form.defaultRoleId) },
      })
      if (data) return { redirect: `/console/tenants/${read.tenant.id}/scim?saved=1` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code !== 400 && refused.code !== 403) return refusalPage(signed, refused)
      return scimPage(signed, read.tenant, refused.code, formErrorsOf(refused))
    }),
  )

  router.post(
    '/console/tenants/:tenantId/scim/groups/:groupId',
    { schema: { hide: true } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, groupId } = request.params as { tenantId: string; groupId: string }
        const read = await readTenantFor(signed, tenantId)
        if ('refused' in read) return read.refused
        const back = `/console/tenants/${tenantId}/scim`
        const form = request.body as Record<string, unknown>
        const groups = await signed.api.GET('/v1/tenants/{tenantId}/scim/groups', {
          params: { path: { tenantId } },
        })
        const group = groups.data?.result.find((g) => g.id === groupId)
        if (!UUID.test(groupId) || !group)
          return refusalPage(signed, { code: 404, reason: 'scim_group_not_found', message: 'No such group' })
        if (group.updated !== text(form.updated)) return changedMeanwhilePage(signed, 'group', back)
        const roleId = text(form[`role-${groupId}`])
        const priority = Number(text(form[`priority-${groupId}`]) || group.priority)
        const { data, error, response } = await signed.api.PUT(
          '/v1/tenants/{tenantId}/scim/groups/{groupId}',
          {
            params: { path: { tenantId, groupId } },
            // The group list has no ETag per group: the version is checked against a fresh read just above.
            headers: { 'if-match': '*' },
            body: { roleId: roleId || null, ...(Number.isInteger(priority) ? { priority } : {}) },
          },
        )
        if (data) return { redirect: `${back}?saved=1` }
        const refused = apiErrorOf(error, response.status)
        if (refused.code === 412) return changedMeanwhilePage(signed, 'group', back)
        if (refused.code !== 400 && refused.code !== 403) return refusalPage(signed, refused)
        return scimPage(signed, read.tenant, refused.code, formErrorsOf(refused))
      }),
  )
}
