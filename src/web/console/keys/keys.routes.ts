import type { FastifyInstance } from 'fastify'
import { html } from '../../../html.js'
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
import { alreadyShownBody, type KeyFormValues, keyForm, keysBody, shownOnceBody } from './keys.views.js'

type Params = { tenantId: string; keyId?: string }

/** A tenant's API keys and SCIM tokens (API.md §17 "API keys and SCIM"): list, create (shown once), disable. */
export function keyRoutes(router: FastifyInstance, pages: ConsolePages): void {
  router.get('/console/tenants/:tenantId/api-keys', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const tenant = read.tenant
      const [keys, roles] = await Promise.all([
        signed.api.GET('/v1/tenants/{tenantId}/api-keys', { params: { path: { tenantId: tenant.id } } }),
        signed.api.GET('/v1/tenants/{tenantId}/roles', { params: { path: { tenantId: tenant.id } } }),
      ])
      if (!keys.data) return refusalPage(signed, apiErrorOf(keys.error, keys.response.status))
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

  router.get('/console/tenants/:tenantId/api-keys/new', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const scope = text((request.query as Record<string, unknown>).scope) === 'scim' ? 'scim' : 'api'
      return newKeyPage(signed, read.tenant, { name: '', description: '', roleId: '', scope })
    }),
  )

  router.post('/console/tenants/:tenantId/api-keys', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const tenant = read.tenant
      const form = request.body as Record<string, unknown>
      const values: KeyFormValues = {
        name: text(form.name).trim(),
        description: text(form.description).trim(),
        roleId: text(form.roleId),
        scope: text(form.scope) === 'scim' ? 'scim' : 'api',
      }
      const { data, error, response } = await signed.api.POST('/v1/tenants/{tenantId}/api-keys', {
        params: { path: { tenantId: tenant.id } },
        headers: { 'idempotency-key': signed.formId },
        body: {
          name: values.name,
          roleId: values.roleId,
          scope: values.scope as 'api' | 'scim',
          ...(values.description ? { description: values.description } : {}),
        },
      })
      const crumbs = tenantCrumbs(
        tenant,
        ['API keys', `/console/tenants/${tenant.id}/api-keys`],
        ['Created', undefined],
      )
      if (data) {
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
          signed.page(
            { title: 'Key created', area: 'tenants', crumbs },
            shownOnceBody(tenant.id, data.result),
          ),
        ]
      }
      const refused = apiErrorOf(error, response.status)
      if (refused.code !== 400 && refused.code !== 409 && refused.code !== 403)
        return refusalPage(signed, refused)
      return newKeyPage(signed, tenant, values, formErrorsOf(refused), refused.code)
    }),
  )

  router.post(
    '/console/tenants/:tenantId/api-keys/:keyId/status',
    { schema: { hide: true } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, keyId = '' } = request.params as Params
        const form = request.body as Record<string, unknown>
        const back = `/console/tenants/${tenantId}/api-keys`
        if (!UUID.test(tenantId) || !UUID.test(keyId))
          return refusalPage(signed, { code: 404, reason: 'api_key_not_found', message: 'No such API key' })
        const current = await signed.api.GET('/v1/tenants/{tenantId}/api-keys/{keyId}', {
          params: { path: { tenantId, keyId } },
        })
        if (!current.data) return refusalPage(signed, apiErrorOf(current.error, current.response.status))
        // The list the button was on showed the key as of `updated`; a change since then is not overwritten.
        if (current.data.result.updated !== text(form.updated))
          return changedMeanwhilePage(signed, 'API key', back)
        const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}/api-keys/{keyId}', {
          params: { path: { tenantId, keyId } },
          headers: { 'if-match': current.response.headers.get('etag') ?? '*' },
          body: { status: text(form.status) === 'enabled' ? 'enabled' : 'disabled' },
        })
        if (data) return { redirect: back }
        const refused = apiErrorOf(error, response.status)
        if (refused.code === 412) return changedMeanwhilePage(signed, 'API key', back)
        return refusalPage(signed, refused)
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
        title: errors ? `Error: ${title}` : title,
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
