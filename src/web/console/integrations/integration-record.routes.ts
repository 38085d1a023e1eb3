import type { FastifyInstance } from 'fastify'
import { apiErrorOf } from '../api/client.js'
import { text } from '../kit/forms.js'
import { type ConsolePages, type PageResult, refusalPage, type Signed } from '../kit/pages.js'
import { readRecordFor, type TenantOf, tenantCrumbs } from '../kit/tenant-scope.js'
import { integrationErrorsOf } from './integration-fields.js'
import { deleteBody, type Integration, integrationBody, NOTICES } from './integrations.views.js'

export type IntegrationParams = { tenantId: string; integrationId: string }
type Params = IntegrationParams

export const listOf = (tenant: { id: string }) => `/console/tenants/${tenant.id}/integrations`

export function crumbsOf(tenant: TenantOf, ...rest: [string, string | undefined][]) {
  return tenantCrumbs(tenant, ['Integrations', listOf(tenant)], ...rest)
}

/** The tenant and the integration the path names, with its ETag; or the refusal page. */
export function loadIntegration(signed: Signed, params: Params) {
  return readRecordFor(
    signed,
    params.tenantId,
    params.integrationId,
    { code: 404, reason: 'integration_not_found', message: 'No such integration' },
    (tenantId, integrationId) =>
      signed.api.GET('/v1/tenants/{tenantId}/integrations/{integrationId}', {
        params: { path: { tenantId, integrationId } },
      }),
  )
}

/**
 * One integration's page (its settings, secrets only as "set"), activate / deactivate (a refusal names
 * the empty settings by their labels) and delete after a confirmation page.
 */
export function integrationRecordRoutes(router: FastifyInstance, pages: ConsolePages): void {
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

  router.get(route('/:integrationId'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const notice = NOTICES[text((request.query as Record<string, unknown>).done)]
      return detailPage(signed, read.tenant, read.record, notice)
    }),
  )

  router.post(route('/:integrationId/active'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const active = text((request.body as Record<string, unknown>).active) === 'true'
      const { data, error, response } = await signed.api.PUT(
        '/v1/tenants/{tenantId}/integrations/{integrationId}',
        {
          params: { path: { tenantId: read.tenant.id, integrationId: read.record.id } },
          headers: { 'if-match': read.etag || '"none"' },
          body: { active },
        },
      )
      const base = `${listOf(read.tenant)}/${read.record.id}`
      if (data) return { redirect: `${base}?done=${active ? 'activated' : 'deactivated'}` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code !== 400) return refusalPage(signed, refused)
      // Activation refused: the page says which settings are missing, by their labels.
      const missing = integrationErrorsOf(refused.attribute ?? {})
        .active?.split(': ')
        .slice(1)
        .join(': ')
      const problem = missing
        ? `It cannot be activated while these settings are empty: ${missing}.`
        : refused.message
      return detailPage(signed, read.tenant, read.record, undefined, problem)
    }),
  )

  router.get(route('/:integrationId/delete'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params as Params)
      if ('refused' in read) return read.refused
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

  router.post(route('/:integrationId/delete'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const { error, response } = await signed.api.DELETE(
        '/v1/tenants/{tenantId}/integrations/{integrationId}',
        { params: { path: { tenantId: read.tenant.id, integrationId: read.record.id } } },
      )
      if (response.status !== 204) return refusalPage(signed, apiErrorOf(error, response.status))
      return { redirect: `${listOf(read.tenant)}?done=deleted` }
    }),
  )
}
