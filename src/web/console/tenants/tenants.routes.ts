import { Type } from 'typebox'
import { html } from '../../../html.js'
import { Uuid } from '../../../http/schemas.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { Checkbox, ChosenId, Cursor, Form, Query, TenantPath, Typed } from '../kit/inputs.js'
import { type ConsolePages, type PageResult, permissionsIn, type Signed } from '../kit/pages.js'
import { ifMatch } from '../kit/record-edits.js'
import { called, formErrorsOf } from '../kit/refusals.js'
import { readTenantFor, UUID } from '../kit/tenant-scope.js'
import { emptyValues, valuesOf } from './tenant-form-values.js'
import { tenantSecurityRoutes } from './tenant-security.routes.js'
import { type TenantFormValues, type TreeNode, tenantBody, tenantForm, treeBody } from './tenants.views.js'

/** Children drawn under one open node; a tenant's page lists more. */
const CHILDREN_PER_NODE = 100
const ROOTS_PER_PAGE = 100

/** The tree's query: the open nodes (comma-separated ids, as the "Show sub-tenants" links write them). */
const TreeQuery = Query({ open: Typed(), cursor: Cursor })
/** The tenant form's fields (tenants.views.ts); the region is chosen once, the administrator by e-mail. */
const TenantForm = Form({
  name: Typed(),
  description: Typed(),
  regionId: ChosenId,
  timezone: Typed(),
  active: Checkbox,
  administrator: Typed(),
  parentId: ChosenId,
})

/** The tenant tree, a tenant's page, create and edit (docs/console.md "Pages"). */
export function tenantRoutes(router: TypedApp, pages: ConsolePages): void {
  const platformId = pages.ctx.platform.id
  tenantSecurityRoutes(router, pages)

  /** One level of the tree through `GET /v1/tenants?parentId=`, with the open nodes' children below. */
  async function level(signed: Signed, parentId: string, open: Set<string>, limit: number, cursor?: string) {
    const { data } = await called(
      signed.api.GET('/v1/tenants', {
        params: { query: { parentId, limit, ...(cursor ? { cursor } : {}) } },
      }),
    )
    const nodes: TreeNode[] = await Promise.all(
      data.result.map(async (tenant) => {
        if (!open.has(tenant.id) || tenant.childIds.length === 0) return { tenant }
        const below = await level(signed, tenant.id, open, CHILDREN_PER_NODE)
        return { tenant, children: below.nodes, more: below.nextCursor !== undefined }
      }),
    )
    return { nodes, nextCursor: data.nextCursor }
  }

  router.get('/console/tenants', { schema: { hide: true, querystring: TreeQuery } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const query = request.query
      const openList = (query.open ?? '').split(',').filter((id) => UUID.test(id))
      const open = new Set(openList)
      const platformWide = signed.login.platformPermissions.length > 0
      let roots: TreeNode[]
      let nextCursor: string | undefined
      if (platformWide) {
        const cursor = query.cursor || undefined
        ;({ nodes: roots, nextCursor } = await level(signed, platformId, open, ROOTS_PER_PAGE, cursor))
      } else {
        // A member sees the subtrees of their memberships: those tenants are the first level.
        roots = await Promise.all(
          signed.login.tenants.map(async (m): Promise<TreeNode | undefined> => {
            const { data } = await signed.api.GET('/v1/tenants/{tenantId}', {
              params: { path: { tenantId: m.tenantId } },
            })
            if (!data) return undefined
            const tenant = data.result
            if (!open.has(tenant.id) || tenant.childIds.length === 0) return { tenant }
            const below = await level(signed, tenant.id, open, CHILDREN_PER_NODE)
            return { tenant, children: below.nodes, more: below.nextCursor !== undefined }
          }),
        ).then((nodes) => nodes.filter((n): n is TreeNode => n !== undefined))
      }
      const mayCreateRoot = signed.login.platformPermissions.includes('MANAGE_TENANT')
      return [
        200,
        signed.page(
          { title: 'Tenants', area: 'tenants', crumbs: [['Tenants', undefined]] },
          treeBody({ roots, open: openList, nextCursor, mayCreateRoot }),
        ),
      ]
    }),
  )

  const NewQuery = Query({ parentId: Type.Optional(Uuid()) })
  router.get('/console/tenants/new', { schema: { hide: true, querystring: NewQuery } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) =>
      newTenantPage(signed, request.query.parentId ?? '', emptyValues()),
    ),
  )

  router.post('/console/tenants', { schema: { hide: true, body: TenantForm } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const values = valuesOf(request.body)
      const parentId = request.body.parentId ?? ''
      const { data } = await called(
        signed.api.POST('/v1/tenants', {
          headers: { 'idempotency-key': signed.formId },
          body: {
            name: values.name,
            description: values.description,
            regionId: values.regionId,
            active: values.active,
            ...(values.timezone ? { timezone: values.timezone } : {}),
            ...(parentId ? { parentId } : {}),
          },
        }),
        { form: (errors) => newTenantPage(signed, parentId, values, errors) },
      )
      return { redirect: `/console/tenants/${data.result.id}` }
    }),
  )

  router.get('/console/tenants/:tenantId', { schema: { hide: true, params: TenantPath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenant: t } = await readTenantFor(signed, request.params.tenantId)
      const [children, regions] = await Promise.all([
        level(signed, t.id, new Set(), CHILDREN_PER_NODE),
        signed.api.GET('/v1/regions'),
      ])
      const region = regions.data?.result.find((r) => r.id === t.regionId)?.name ?? t.regionId
      const permissions = permissionsIn(signed, [t.id, ...t.parentIds])
      return [
        200,
        signed.page(
          {
            title: t.name,
            area: 'tenants',
            crumbs: [
              ['Tenants', '/console/tenants'],
              [t.name, undefined],
            ],
          },
          tenantBody({
            tenant: t,
            region,
            children: children.nodes,
            more: children.nextCursor !== undefined,
            canEdit: permissions.has('MANAGE_TENANT'),
            canManageMembers: permissions.has('MANAGE_TENANT_ENROLLMENT'),
          }),
        ),
      ]
    }),
  )

  router.get(
    '/console/tenants/:tenantId/edit',
    { schema: { hide: true, params: TenantPath } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const tenant = await readTenantFor(signed, request.params.tenantId)
        const admin = await signed.api.GET('/v1/users/{userId}', {
          params: { path: { userId: tenant.tenant.adminUserId } },
        })
        const t = tenant.tenant
        const values: TenantFormValues = {
          name: t.name,
          description: t.description,
          regionId: t.regionId,
          timezone: t.timezone,
          active: t.active,
          administrator: admin.data?.result.email ?? '',
          cxengageIdentityProvider: t.cxengageIdentityProvider,
        }
        return editTenantPage(signed, t, values, tenant.etag)
      }),
  )

  const editSchema = { hide: true, params: TenantPath, body: TenantForm }
  router.post('/console/tenants/:tenantId/edit', { schema: editSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params
      const version = request.body.version ?? ''
      const values = valuesOf(request.body)
      const current = await readTenantFor(signed, tenantId)
      // The policy is shown, not edited, here (its own page says first what a change would do).
      values.cxengageIdentityProvider = current.tenant.cxengageIdentityProvider
      const errors: Record<string, string> = {}
      let adminUserId: string | undefined
      if (values.administrator) {
        const found = await signed.api.GET('/v1/users', {
          params: { query: { email: values.administrator } },
        })
        adminUserId = found.data?.result[0]?.id
        if (!adminUserId)
          errors.administrator = 'is not a user you can see: give the e-mail of a platform user'
      } else errors.administrator = 'is required'
      if (Object.keys(errors).length) return editTenantPage(signed, current.tenant, values, version, errors)
      await called(
        signed.api.PUT('/v1/tenants/{tenantId}', {
          params: { path: { tenantId } },
          headers: ifMatch(version),
          body: {
            name: values.name,
            description: values.description,
            timezone: values.timezone,
            active: values.active,
            ...(adminUserId ? { adminUserId } : {}),
          },
        }),
        {
          changed: { what: 'tenant', href: `/console/tenants/${tenantId}/edit` },
          form: (errors) => editTenantPage(signed, current.tenant, values, version, errors),
          errorsOf: (refused) => formErrorsOf(refused, { adminUserId: 'administrator' }),
        },
      )
      return { redirect: `/console/tenants/${tenantId}` }
    }),
  )

  async function newTenantPage(
    signed: Signed,
    parentId: string,
    values: TenantFormValues,
    errors?: Record<string, string>,
    status = 200,
  ): Promise<PageResult> {
    const regions = (await signed.api.GET('/v1/regions')).data?.result ?? []
    if (!values.regionId) values.regionId = regions[0]?.id ?? ''
    let parent: { id: string; name: string } | undefined
    if (parentId) {
      const read = await readTenantFor(signed, parentId)
      parent = { id: read.tenant.id, name: read.tenant.name }
    }
    const title = parent ? `New sub-tenant of ${parent.name}` : 'New tenant'
    const crumbs: [string, string | undefined][] = [['Tenants', '/console/tenants']]
    if (parent) crumbs.push([parent.name, `/console/tenants/${parent.id}`])
    crumbs.push([title, undefined])
    return [
      status,
      signed.page(
        { title: title, area: 'tenants', crumbs },
        html`<h1>${title}</h1>${tenantForm({ action: '/console/tenants', token: signed.form(), values, errors, regions, parent, editing: false })}`,
      ),
    ]
  }

  async function editTenantPage(
    signed: Signed,
    tenant: { id: string; name: string },
    values: TenantFormValues,
    version: string,
    errors?: Record<string, string>,
    status = 200,
  ): Promise<PageResult> {
    const regions = (await signed.api.GET('/v1/regions')).data?.result ?? []
    const title = `Edit ${tenant.name}`
    return [
      status,
      signed.page(
        {
          title: title,
          area: 'tenants',
          crumbs: [
            ['Tenants', '/console/tenants'],
            [tenant.name, `/console/tenants/${tenant.id}`],
            ['Edit', undefined],
          ],
        },
        html`<h1>${title}</h1>${tenantForm({
          action: `/console/tenants/${tenant.id}/edit`,
          token: signed.form(),
          version,
          values,
          errors,
          regions,
          editing: true,
        })}`,
      ),
    ]
  }
}
