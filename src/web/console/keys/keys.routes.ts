import { html } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { ChosenId, Form, OneOf, Query, RecordPath, TenantPath, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { called, changedMeanwhilePage } from '../kit/refusals.js'
import { readTenantFor, roleChoices, type TenantOf, tenantCrumbs } from '../kit/tenant-scope.js'
import { alreadyShownBody, type KeyFormValues, keyForm, keysBody, shownOnceBody } from './keys.views.js'

const Scope = OneOf(['api', 'scim'])
const KeyForm = Form({ name: Typed(), description: Typed(), roleId: ChosenId, scope: Scope })
/** A key's status button: the status asked for, and the key's `updated` as the list showed it. */
const StatusForm = Form({ status: OneOf(['enabled', 'disabled']), updated: Typed(64) })

/**
 * A tenant's API keys and SCIM tokens (docs/console-admin.md "API keys"): list, create (shown
 * once), disable.
 */
export function keyRoutes(router: TypedApp, pages: ConsolePages): void {
  router.get(
    '/console/tenants/:tenantId/api-keys',
    { schema: { hide: true, params: TenantPath } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenant } = await readTenantFor(signed, request.params.tenantId)
        const [keys, roles] = await Promise.all([
          called(
            signed.api.GET('/v1/tenants/{tenantId}/api-keys', { params: { path: { tenantId: tenant.id } } }),
          ),
          signed.api.GET('/v1/tenants/{tenantId}/roles', { params: { path: { tenantId: tenant.id } } }),
        ])
        const roleNames = new Map((roles.data?.result ?? []).map((r) => [r.id, r.name]))
        return [
          200,
          signed.page(
            {
              title: `API keys of ${tenant.name}`,
              area: 'tenants',
              crumbs: tenantCrumbs(tenant, ['API keys', undefined]),
            },
            keysBody({
              tenantId: tenant.id,
              tenantName: tenant.name,
              keys: keys.data.result,
              roleNames,
              form: signed.form,
            }),
          ),
        ]
      }),
  )

  const newSchema = { hide: true, params: TenantPath, querystring: Query({ scope: Scope }) }
  router.get('/console/tenants/:tenantId/api-keys/new', { schema: newSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const scope = request.query.scope ?? 'api'
      return newKeyPage(signed, read.tenant, { name: '', description: '', roleId: '', scope })
    }),
  )

  const createSchema = { hide: true, params: TenantPath, body: KeyForm }
  router.post('/console/tenants/:tenantId/api-keys', { schema: createSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenant } = await readTenantFor(signed, request.params.tenantId)
      const form = request.body
      const scope = form.scope ?? 'api'
      const values: KeyFormValues = {
        name: (form.name ?? '').trim(),
        description: (form.description ?? '').trim(),
        roleId: form.roleId ?? '',
        scope,
      }
      const { data, response } = await called(
        signed.api.POST('/v1/tenants/{tenantId}/api-keys', {
          params: { path: { tenantId: tenant.id } },
          headers: { 'idempotency-key': signed.formId },
          body: {
            name: values.name,
            roleId: values.roleId,
            scope,
            ...(values.description ? { description: values.description } : {}),
          },
        }),
        {
          form: (errors, status) => newKeyPage(signed, tenant, values, errors, status),
          formCodes: [400, 403, 409],
        },
      )
      const crumbs = tenantCrumbs(
        tenant,
        ['API keys', `/console/tenants/${tenant.id}/api-keys`],
        ['Created', undefined],
      )
      // A replayed create (the same form sent again, or a reload) carries the stored secret: not shown twice.
      if (response.headers.get('idempotent-replayed') === 'true')
        return [
          200,
          signed.page(
            { title: 'Key already created', area: 'tenants', crumbs },
            alreadyShownBody(tenant.id, data.result),
          ),
        ]
      return [
        201,
        signed.page({ title: 'Key created', area: 'tenants', crumbs }, shownOnceBody(tenant.id, data.result)),
      ]
    }),
  )

  const statusSchema = { hide: true, params: RecordPath('keyId'), body: StatusForm }
  router.post(
    '/console/tenants/:tenantId/api-keys/:keyId/status',
    { schema: statusSchema },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, keyId } = request.params
        const back = `/console/tenants/${tenantId}/api-keys`
        const changed = { what: 'API key', href: back }
        const current = await called(
          signed.api.GET('/v1/tenants/{tenantId}/api-keys/{keyId}', {
            params: { path: { tenantId, keyId } },
          }),
        )
        // The list the button was on showed the key as of `updated`; a change since then is not overwritten.
        if (current.data.result.updated !== request.body.updated)
          return changedMeanwhilePage(signed, changed.what, changed.href)
        await called(
          signed.api.PUT('/v1/tenants/{tenantId}/api-keys/{keyId}', {
            params: { path: { tenantId, keyId } },
            headers: { 'if-match': current.response.headers.get('etag') ?? '*' },
            body: { status: request.body.status ?? 'disabled' },
          }),
          { changed },
        )
        return { redirect: back }
      }),
  )
}

async function newKeyPage(
  signed: Signed,
  tenant: TenantOf,
  values: KeyFormValues,
  errors?: Record<string, string>,
  status = 200,
): Promise<PageResult> {
  const roles = await roleChoices(signed, tenant)
  if (!values.roleId) values.roleId = roles.find((r) => !r.disabledBecause)?.value ?? ''
  const title = values.scope === 'scim' ? 'New SCIM token' : 'New API key'
  return [
    status,
    signed.page(
      {
        title: title,
        area: 'tenants',
        crumbs: tenantCrumbs(
          tenant,
          ['API keys', `/console/tenants/${tenant.id}/api-keys`],
          [title, undefined],
        ),
      },
      html`<h1>${title}</h1>${keyForm({ tenantId: tenant.id, token: signed.form(), values, roles, errors })}`,
    ),
  ]
}
