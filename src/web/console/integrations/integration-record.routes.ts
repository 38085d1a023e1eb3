import type { TypedApp } from '../../../http/typed-app.js'
import { Done, Form, Query, RecordPath } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { activeToggleRoute, ifMatch } from '../kit/record-edits.js'
import { called } from '../kit/refusals.js'
import { readRecordFor, type TenantOf, tenantCrumbs } from '../kit/tenant-scope.js'
import { integrationErrorsOf } from './integration-fields.js'
import {
  deleteBody,
  type Integration,
  type IntegrationChanges,
  integrationBody,
  NOTICES,
} from './integrations.views.js'

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

/** The integration's PUT (edit, activate / deactivate): `changes` under If-Match with the version read. */
export function saveIntegration(
  signed: Signed,
  read: { tenant: { id: string }; record: { id: string } },
  version: string,
  changes: IntegrationChanges,
) {
  return signed.api.PUT('/v1/tenants/{tenantId}/integrations/{integrationId}', {
    params: { path: { tenantId: read.tenant.id, integrationId: read.record.id } },
    headers: ifMatch(version),
    body: changes,
  })
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

  activeToggleRoute(router, pages, route('/:integrationId/active'), IntegrationPath, {
    load: loadIntegration,
    put: (signed, read, body) => saveIntegration(signed, read, read.etag, body),
    page: ({ tenant, record }) => `${listOf(tenant)}/${record.id}`,
    notices: ['activated', 'deactivated'],
    redraw: (signed, { tenant, record }) => ({
      // Activation refused: the page says which settings are missing, by their labels.
      errorsOf: (refused) => {
        const missing = integrationErrorsOf(refused.attribute ?? {})
          .active?.split(': ')
          .slice(1)
          .join(': ')
        return {
          _: missing ? `It cannot be activated while these settings are empty: ${missing}.` : refused.message,
        }
      },
      form: (errors) => detailPage(signed, tenant, record, undefined, errors._),
      formCodes: [400],
    }),
  })

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
