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
import { readTenantFor, type TenantOf, tenantCrumbs, tenantListPage, UUID } from '../kit/tenant-scope.js'
import { type Permission, type RoleFormValues, roleForm, rolesBody } from './roles.views.js'

type Params = { tenantId: string; roleId?: string }

/** A tenant's roles (API.md §17 "Roles"): list, create, edit with the role ceiling visible. */
export function roleRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const mineIn = (signed: Signed, tenant: TenantOf) => permissionsIn(signed, [tenant.id, ...tenant.parentIds])

  async function formPage(
    signed: Signed,
    tenant: TenantOf,
    values: RoleFormValues,
    edit?: { id: string; version: string },
    errors?: Record<string, string>,
    status = 200,
  ): Promise<PageResult> {
    const catalogue = await signed.api.GET('/v1/tenants/{tenantId}/permissions', {
      params: { path: { tenantId: tenant.id } },
    })
    const title = edit ? `Edit ${values.name}` : 'New role'
    const base = `/console/tenants/${tenant.id}/roles`
    return [
      status,
      signed.page(
        {
          title: errors ? `Error: ${title}` : title,
          area: 'tenants',
          crumbs: tenantCrumbs(tenant, ['Roles', base], [title, undefined]),
        },
        html`<h1>${title}</h1>${
          edit
            ? html`<p><a href="/console/tenants/${tenant.id}/history?targetId=${edit.id}">History</a></p>`
            : ''
        }${roleForm({
          action: edit ? `${base}/${edit.id}/edit` : base,
          token: signed.form(),
          version: edit?.version,
          values,
          catalogue: (catalogue.data?.result ?? []) as Permission[],
          mine: mineIn(signed, tenant),
          errors,
          editing: edit !== undefined,
        })}`,
      ),
    ]
  }

  router.get('/console/tenants/:tenantId/roles', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/roles', {
        params: { path: { tenantId: read.tenant.id } },
      })
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      return tenantListPage(
        signed,
        read.tenant,
        'Roles',
        rolesBody({
          tenant: read.tenant,
          roles: data.result,
          mayManage: mineIn(signed, read.tenant).has('MANAGE_ALL_ROLES'),
        }),
      )
    }),
  )

  router.get('/console/tenants/:tenantId/roles/new', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      return formPage(signed, read.tenant, {
        name: '',
        description: '',
        permissions: [],
        active: true,
        shared: false,
      })
    }),
  )

  router.post('/console/tenants/:tenantId/roles', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const values = valuesOf(request.body as Record<string, unknown>)
      const { data, error, response } = await signed.api.POST('/v1/tenants/{tenantId}/roles', {
        params: { path: { tenantId: read.tenant.id } },
        headers: { 'idempotency-key': signed.formId },
        body: values,
      })
      if (data) return { redirect: `/console/tenants/${read.tenant.id}/roles` }
      const refused = apiErrorOf(error, response.status)
      if (![400, 403, 409].includes(refused.code)) return refusalPage(signed, refused)
      return formPage(signed, read.tenant, values, undefined, formErrorsOf(refused), refused.code)
    }),
  )

  async function readRole(signed: Signed, tenant: TenantOf, roleId: string) {
    if (!UUID.test(roleId)) return undefined
    const { data, response } = await signed.api.GET('/v1/tenants/{tenantId}/roles/{roleId}', {
      params: { path: { tenantId: tenant.id, roleId } },
    })
    return data ? { role: data.result, etag: response.headers.get('etag') ?? '' } : undefined
  }
  const noRole = (signed: Signed) =>
    refusalPage(signed, { code: 404, reason: 'role_not_found', message: 'No such role' })

  router.get('/console/tenants/:tenantId/roles/:roleId/edit', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const params = request.params as Params
      const read = await readTenantFor(signed, params.tenantId)
      if ('refused' in read) return read.refused
      const found = await readRole(signed, read.tenant, params.roleId ?? '')
      if (!found) return noRole(signed)
      const [catalogue] = await Promise.all([signed.api.GET('/v1/permissions')])
      const names = new Map((catalogue.data?.result ?? []).map((p) => [p.id, p.name as string]))
      const r = found.role
      const values = {
        name: r.name,
        description: r.description,
        permissions: r.permissions.map((id) => names.get(id) ?? id),
        active: r.active,
        shared: r.shared,
      }
      return formPage(signed, read.tenant, values, { id: r.id, version: found.etag })
    }),
  )

  router.post('/console/tenants/:tenantId/roles/:roleId/edit', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const params = request.params as Params
      const read = await readTenantFor(signed, params.tenantId)
      if ('refused' in read) return read.refused
      const found = await readRole(signed, read.tenant, params.roleId ?? '')
      if (!found) return noRole(signed)
      const form = request.body as Record<string, unknown>
      const values = valuesOf(form)
      // A permission the person cannot grant is a disabled box, which a browser does not send: one the
      // role already has stays as it is (the person can neither grant nor remove it).
      const catalogue = await signed.api.GET('/v1/permissions')
      const names = new Map((catalogue.data?.result ?? []).map((p) => [p.id, p.name as string]))
      const mine = mineIn(signed, read.tenant)
      for (const id of found.role.permissions) {
        const name = names.get(id) ?? id
        if (!mine.has(name) && !values.permissions.includes(name)) values.permissions.push(name)
      }
      const base = `/console/tenants/${read.tenant.id}/roles`
      const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}/roles/{roleId}', {
        params: { path: { tenantId: read.tenant.id, roleId: found.role.id } },
        headers: { 'if-match': text(form.version) || '"none"' },
        body: values,
      })
      if (data) return { redirect: base }
      const refused = apiErrorOf(error, response.status)
      if (refused.code === 412) return changedMeanwhilePage(signed, 'role', `${base}/${found.role.id}/edit`)
      if (![400, 403, 409].includes(refused.code)) return refusalPage(signed, refused)
      const edit = { id: found.role.id, version: text(form.version) }
      return formPage(signed, read.tenant, values, edit, formErrorsOf(refused), refused.code)
    }),
  )
}

function valuesOf(form: Record<string, unknown>): RoleFormValues {
  const chosen = form.permissions
  const permissions = (Array.isArray(chosen) ? chosen : chosen === undefined ? [] : [chosen]).map(String)
  return {
    name: text(form.name).trim(),
    description: text(form.description).trim(),
    permissions,
    active: form.active === 'on',
    shared: form.shared === 'on',
  }
}
