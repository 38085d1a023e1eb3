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
import { readTenantFor, UUID } from '../kit/tenant-scope.js'
import { emptyValues, valuesOf } from './tenant-form-values.js'
import { type TenantFormValues, type TreeNode, tenantBody, tenantForm, treeBody } from './tenants.views.js'

/** Children drawn under one open node; a tenant's page lists more. */
const CHILDREN_PER_NODE = 100
const ROOTS_PER_PAGE = 100

/** The tenant tree, a tenant's page, create and edit (API.md §17 "Tenants"). */
export function tenantRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const platformId = pages.ctx.platform.id

  /** One level of the tree through `GET /v1/tenants?parentId=`, with the open nodes' children below. */
  async function level(signed: Signed, parentId: string, open: Set<string>, limit: number, cursor?: string) {
    const { data, error, response } = await signed.api.GET('/v1/tenants', {
      params: { query: { parentId, limit, ...(cursor ? { cursor } : {}) } },
    })
    if (!data) throw new Error(`GET /v1/tenants answered ${response.status}: ${JSON.stringify(error)}`)
    const nodes: TreeNode[] = await Promise.all(
      data.result.map(async (tenant) => {
        if (!open.has(tenant.id) || tenant.childIds.length === 0) return { tenant }
        const below = await level(signed, tenant.id, open, CHILDREN_PER_NODE)
        return { tenant, children: below.nodes, more: below.nextCursor !== undefined }
      }),
    )
    return { nodes, nextCursor: data.nextCursor }
  }

  router.get('/console/tenants', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const query = request.query as Record<string, unknown>
      const openList = text(query.open)
        .split(',')
        .filter((id) => UUID.test(id))
      const open = new Set(openList)
      const platformWide = signed.login.platformPermissions.length > 0
      let roots: TreeNode[]
      let nextCursor: string | undefined
      if (platformWide) {
        const cursor = text(query.cursor) || undefined
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

  router.get('/console/tenants/new', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const parentId = text((request.query as Record<string, unknown>).parentId)
      return newTenantPage(signed, parentId, emptyValues())
    }),
  )

  router.post('/console/tenants', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const form = request.body as Record<string, unknown>
      const values = valuesOf(form)
      const parentId = text(form.parentId)
      const { data, error, response } = await signed.api.POST('/v1/tenants', {
        headers: { 'idempotency-key': signed.formId },
        body: {
          name: values.name,
          description: values.description,
          regionId: values.regionId,
          active: values.active,
          ...(values.timezone ? { timezone: values.timezone } : {}),
          ...(UUID.test(parentId) ? { parentId } : {}),
        },
      })
      if (data) return { redirect: `/console/tenants/${data.result.id}` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code !== 400 && refused.code !== 409) return refusalPage(signed, refused)
      return newTenantPage(signed, parentId, values, formErrorsOf(refused))
    }),
  )

  router.get('/console/tenants/:tenantId', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params as { tenantId: string }
      const tenant = await readTenantFor(signed, tenantId)
      if ('refused' in tenant) return tenant.refused
      const t = tenant.tenant
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

  router.get('/console/tenants/:tenantId/edit', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params as { tenantId: string }
      const tenant = await readTenantFor(signed, tenantId)
      if ('refused' in tenant) return tenant.refused
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

  router.post('/console/tenants/:tenantId/edit', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params as { tenantId: string }
      const form = request.body as Record<string, unknown>
      const values = valuesOf(form)
      const current = await readTenantFor(signed, tenantId)
      if ('refused' in current) return current.refused
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
      if (Object.keys(errors).length)
        return editTenantPage(signed, current.tenant, values, text(form.version), errors)
      const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}', {
        params: { path: { tenantId } },
        headers: { 'if-match': text(form.version) || '"none"' },
        body: {
          name: values.name,
          description: values.description,
          timezone: values.timezone,
          active: values.active,
          ...(adminUserId ? { adminUserId } : {}),
        },
      })
      if (data) return { redirect: `/console/tenants/${tenantId}` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code === 412)
        return changedMeanwhilePage(signed, 'tenant', `/console/tenants/${tenantId}/edit`)
      if (refused.code !== 400 && refused.code !== 409) return refusalPage(signed, refused)
      return editTenantPage(
        signed,
        current.tenant,
        values,
        text(form.version),
        formErrorsOf(refused, { adminUserId: 'administrator' }),
      )
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
    if (UUID.test(parentId)) {
      const read = await readTenantFor(signed, parentId)
      if ('refused' in read) return read.refused
      parent = { id: read.tenant.id, name: read.tenant.name }
    }
    const title = parent ? `New sub-tenant of ${parent.name}` : 'New tenant'
    const crumbs: [string, string | undefined][] = [['Tenants', '/console/tenants']]
    if (parent) crumbs.push([parent.name, `/console/tenants/${parent.id}`])
    crumbs.push([title, undefined])
    return [
      status,
      signed.page(
        { title: errors ? `Error: ${title}` : title, area: 'tenants', crumbs },
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
          title: errors ? `Error: ${title}` : title,
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
