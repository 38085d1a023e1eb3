import type { TypedApp } from '../../../http/typed-app.js'
import { Done, Form, OneOf, Query, RecordPath } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { called } from '../kit/refusals.js'
import { readRecordFor, type TenantOf, tenantCrumbs } from '../kit/tenant-scope.js'
import { integrationErrorsOf } from './integration-fields.js'
import { deleteBody, type Integration, integrationBody, NOTICES } from './integrations.views.js'

export const IntegrationPath = RecordPath('integrationId')

export const listOf = (tenant: { id: string }) => `/console/tenants/${tenant.id}/integrations`

export function crumbsOf(tenant: TenantOf, ...rest: [string, string | undefined][]) {
  return tenantCrumbs(tenant, ['Integrations', listOf(tenant)], ...rest)
}

/** The tenant and the integration the path names, with its ETag; or the refusal page. */
export function loadIntegration(signed: Signed, params: { tenantId: string; integrationId: string }) {
  return readRecordFor(signed, params.tenantId, params.integrationId, (tenantId, integrationId) =>
    signed.api.GET('/v1/tenants/{tenantId}/integrations/{integrationId}', {
      params: { path: { tenantId, integrationId } },
    }),
  )
}

/**
 * One integration's page (its settings, secrets only as "set"), activate / deactivate (a refusal names
 * the empty settings by their labels) and delete after a confirmation page.
 */
export function integrationRecordRoutes(router: TypedApp, pages: ConsolePages): void {
  const route = (path: string) => `/console/tenants/:tenantId/integrations${path}`

  function detailPage(
    signed: Signed,
    tenant: TenantOf,
    integration: Integration,
    notice?: string,
    problem?: string,
  ): PageResult {
    return [
      200,
      signed.page(
        { title: integration.name, area: 'tenants', crumbs: crumbsOf(tenant, [integration.name, undefined]) },
        integrationBody({ tenant, integration, form: signed.form, notice, problem }),
      ),
    ]
  }

  const pageSchema = { hide: true, params: IntegrationPath, querystring: Query({ done: Done }) }
  router.get(route('/:integrationId'), { schema: pageSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params)
      return detailPage(signed, read.tenant, read.record, NOTICES[request.query.done ?? ''])
    }),
  )

  const activeSchema = {
    hide: true,
    params: IntegrationPath,
    body: Form({ active: OneOf(['true', 'false']) }),
  }
  router.post(route('/:integrationId/active'), { schema: activeSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params)
      const active = request.body.active === 'true'
      await called(
        signed.api.PUT('/v1/tenants/{tenantId}/integrations/{integrationId}', {
          params: { path: { tenantId: read.tenant.id, integrationId: read.record.id } },
          headers: { 'if-match': read.etag || '"none"' },
          body: { active },
        }),
        {
          // Activation refused: the page says which settings are missing, by their labels.
          errorsOf: (refused) => {
            const missing = integrationErrorsOf(refused.attribute ?? {})
              .active?.split(': ')
              .slice(1)
              .join(': ')
            return {
              _: missing
                ? `It cannot be activated while these settings are empty: ${missing}.`
                : refused.message,
            }
          },
          form: (errors) => detailPage(signed, read.tenant, read.record, undefined, errors._),
          formCodes: [400],
        },
      )
      const base = `${listOf(read.tenant)}/${read.record.id}`
      return { redirect: `${base}?done=${active ? 'activated' : 'deactivated'}` }
    }),
  )

  router.get(
    route('/:integrationId/delete'),
    { schema: { hide: true, params: IntegrationPath } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const read = await loadIntegration(signed, request.params)
        const title = `Delete ${read.record.name}`
        return [
          200,
          signed.page(
            {
              title,
              area: 'tenants',
              crumbs: crumbsOf(
                read.tenant,
                [read.record.name, `${listOf(read.tenant)}/${read.record.id}`],
                ['Delete', undefined],
              ),
            },
            deleteBody({ tenant: read.tenant, integration: read.record, token: signed.form() }),
          ),
        ]
      }),
  )

  const deleteSchema = { hide: true, params: IntegrationPath, body: Form({}) }
  router.post(route('/:integrationId/delete'), { schema: deleteSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params)
      await called(
        signed.api.DELETE('/v1/tenants/{tenantId}/integrations/{integrationId}', {
          params: { path: { tenantId: read.tenant.id, integrationId: read.record.id } },
        }),
      )
      return { redirect: `${listOf(read.tenant)}?done=deleted` }
    }),
  )
}
