import type { TypedApp } from '../../../http/typed-app.js'
import { ChosenId, Done, Form, OpenForm, Query, RecordPath, TenantPath, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { called, changedMeanwhilePage, notFound } from '../kit/refusals.js'
import { readTenantFor, roleChoices, type TenantOf, tenantCrumbs } from '../kit/tenant-scope.js'
import { scimBody } from './scim.views.js'

const SettingsForm = Form({ defaultRoleId: ChosenId })
/** A group's row: its fields are named by the group (`role-<id>`, `priority-<id>`), and its `updated`. */
const GroupForm = OpenForm({ updated: Typed(64) }, 64)

/** A tenant's SCIM settings page (docs/console-admin.md): base URL, tokens, default role, group → role mapping. */
export function scimRoutes(router: TypedApp, pages: ConsolePages): void {
  async function scimPage(
    signed: Signed,
    tenant: TenantOf,
    status = 200,
    errors?: Record<string, string>,
    saved?: string,
  ): Promise<PageResult> {
    const path = { tenantId: tenant.id }
    const [settings, groups, keys, roles] = await Promise.all([
      called(signed.api.GET('/v1/tenants/{tenantId}/scim', { params: { path } })),
      signed.api.GET('/v1/tenants/{tenantId}/scim/groups', { params: { path } }),
      signed.api.GET('/v1/tenants/{tenantId}/api-keys', { params: { path } }),
      roleChoices(signed, tenant),
    ])
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

  const path = '/console/tenants/:tenantId/scim'
  const pageSchema = { hide: true, params: TenantPath, querystring: Query({ saved: Done }) }
  router.get(path, { schema: pageSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      return scimPage(signed, read.tenant, 200, undefined, request.query.saved ? 'Saved.' : undefined)
    }),
  )

  /** A refused change: the page again with the refusal beside its field (400, 403). */
  const onThePage = (signed: Signed, tenant: TenantOf) => ({
    form: (errors: Record<string, string>, status: number) => scimPage(signed, tenant, status, errors),
    formCodes: [400, 403],
  })

  router.post(path, { schema: { hide: true, params: TenantPath, body: SettingsForm } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      await called(
        signed.api.PUT('/v1/tenants/{tenantId}/scim', {
          params: { path: { tenantId: read.tenant.id } },
          body: { defaultRoleId: request.body.defaultRoleId ?? '' },
        }),
        onThePage(signed, read.tenant),
      )
      return { redirect: `/console/tenants/${read.tenant.id}/scim?saved=1` }
    }),
  )

  const groupSchema = { hide: true, params: RecordPath('groupId'), body: GroupForm }
  router.post(`${path}/groups/:groupId`, { schema: groupSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId, groupId } = request.params
      const read = await readTenantFor(signed, tenantId)
      const back = `/console/tenants/${tenantId}/scim`
      const form = request.body
      const groups = await signed.api.GET('/v1/tenants/{tenantId}/scim/groups', {
        params: { path: { tenantId } },
      })
      const group = groups.data?.result.find((g) => g.id === groupId)
      if (!group) throw notFound('scim_group_not_found', 'No such group')
      if (group.updated !== form.updated) return changedMeanwhilePage(signed, 'group', back)
      const roleId = form[`role-${groupId}`] ?? ''
      const priority = Number(form[`priority-${groupId}`] || group.priority)
      await called(
        signed.api.PUT('/v1/tenants/{tenantId}/scim/groups/{groupId}', {
          params: { path: { tenantId, groupId } },
          // The group list has no ETag per group: the version is checked against a fresh read just above.
          headers: { 'if-match': '*' },
          body: { roleId: roleId || null, ...(Number.isInteger(priority) ? { priority } : {}) },
        }),
        { ...onThePage(signed, read.tenant), changed: { what: 'group', href: back } },
      )
      return { redirect: `${back}?saved=1` }
    }),
  )
}
