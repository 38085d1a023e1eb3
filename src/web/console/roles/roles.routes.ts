import { type Static, Type } from 'typebox'
import { html } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { Checkbox, Form, RecordPath, TenantPath, Typed } from '../kit/inputs.js'
import { type ConsolePages, type PageResult, permissionsIn, type Signed } from '../kit/pages.js'
import { ifMatch } from '../kit/record-edits.js'
import { called } from '../kit/refusals.js'
import { readTenantFor, type TenantOf, tenantCrumbs, tenantListRoute } from '../kit/tenant-scope.js'
import { type Permission, type RoleFormValues, roleForm, rolesBody } from './roles.views.js'

/** A permission's name, as its box posts it (the catalogue's longest is far shorter). */
const PermissionName = Type.String({ maxLength: 128 })
/** The role form: a ticked box posts its permission's name; several ticked post the name repeatedly. */
const RoleForm = Form({
  name: Typed(),
  description: Typed(),
  permissions: Type.Optional(Type.Union([PermissionName, Type.Array(PermissionName, { maxItems: 256 })])),
  active: Checkbox,
  shared: Checkbox,
})
const RolePath = RecordPath('roleId')

/** A tenant's roles (docs/console-admin.md "Roles"): list, create, edit with the role ceiling visible. */
export function roleRoutes(router: TypedApp, pages: ConsolePages): void {
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
          title: title,
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

  const path = '/console/tenants/:tenantId/roles'
  tenantListRoute(router, pages, path, 'Roles', {
    read: (signed, tenant) =>
      signed.api.GET('/v1/tenants/{tenantId}/roles', { params: { path: { tenantId: tenant.id } } }),
    body: (signed, tenant, roles) =>
      rolesBody({ tenant, roles, mayManage: mineIn(signed, tenant).has('MANAGE_ALL_ROLES') }),
  })

  router.get(`${path}/new`, { schema: { hide: true, params: TenantPath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      return formPage(signed, read.tenant, {
        name: '',
        description: '',
        permissions: [],
        active: true,
        shared: false,
      })
    }),
  )

  router.post(path, { schema: { hide: true, params: TenantPath, body: RoleForm } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const values = valuesOf(request.body)
      await called(
        signed.api.POST('/v1/tenants/{tenantId}/roles', {
          params: { path: { tenantId: read.tenant.id } },
          headers: { 'idempotency-key': signed.formId },
          body: values,
        }),
        {
          form: (errors, status) => formPage(signed, read.tenant, values, undefined, errors, status),
          formCodes: [400, 403, 409],
        },
      )
      return { redirect: `/console/tenants/${read.tenant.id}/roles` }
    }),
  )

  async function readRole(signed: Signed, tenant: TenantOf, roleId: string) {
    const { data, response } = await called(
      signed.api.GET('/v1/tenants/{tenantId}/roles/{roleId}', {
        params: { path: { tenantId: tenant.id, roleId } },
      }),
    )
    return { role: data.result, etag: response.headers.get('etag') ?? '' }
  }

  router.get(`${path}/:roleId/edit`, { schema: { hide: true, params: RolePath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const found = await readRole(signed, read.tenant, request.params.roleId)
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

  const editSchema = { hide: true, params: RolePath, body: RoleForm }
  router.post(`${path}/:roleId/edit`, { schema: editSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const found = await readRole(signed, read.tenant, request.params.roleId)
      const version = request.body.version ?? ''
      const values = valuesOf(request.body)
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
      const edit = { id: found.role.id, version }
      await called(
        signed.api.PUT('/v1/tenants/{tenantId}/roles/{roleId}', {
          params: { path: { tenantId: read.tenant.id, roleId: found.role.id } },
          headers: ifMatch(version),
          body: values,
        }),
        {
          changed: { what: 'role', href: `${base}/${found.role.id}/edit` },
          form: (errors, status) => formPage(signed, read.tenant, values, edit, errors, status),
          formCodes: [400, 403, 409],
        },
      )
      return { redirect: base }
    }),
  )
}

function valuesOf(form: Static<typeof RoleForm>): RoleFormValues {
  return {
    name: (form.name ?? '').trim(),
    description: (form.description ?? '').trim(),
    permissions: form.permissions === undefined ? [] : [form.permissions].flat(),
    active: form.active === 'on',
    shared: form.shared === 'on',
  }
}
