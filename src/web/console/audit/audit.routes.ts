import type { FastifyInstance } from 'fastify'
import { apiErrorOf } from '../api/client.js'
import { text } from '../kit/forms.js'
import { type ConsolePages, formErrorsOf, refusalPage } from '../kit/pages.js'
import { readTenantFor, tenantCrumbs } from '../kit/tenant-scope.js'
import { auditBody, FILTERS, type Filters } from './audit.views.js'

const PAGE = 50

/**
 * The audit trail (API.md §17 "Audit"): a tenant's events with its sub-tenants' (its "History"), and the
 * platform's, filtered by action, actor, target and time, paged; each event's changes as before → after.
 */
export function auditRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const filtersOf = (query: Record<string, unknown>) => {
    const filters: Filters = {}
    for (const name of FILTERS) {
      const value = text(query[name]).trim()
      if (value) filters[name] = value
    }
    return { filters, cursor: text(query.cursor) || undefined }
  }

  router.get('/console/tenants/:tenantId/history', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as { tenantId: string }).tenantId)
      if ('refused' in read) return read.refused
      const { filters, cursor } = filtersOf(request.query as Record<string, unknown>)
      const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/audit-events', {
        params: {
          path: { tenantId: read.tenant.id },
          query: { ...filters, limit: PAGE, ...(cursor ? { cursor } : {}) },
        },
      })
      const refused = data ? undefined : apiErrorOf(error, response.status)
      if (refused && refused.code !== 400) return refusalPage(signed, refused)
      const title = `History of ${read.tenant.name}`
      return [
        refused ? 400 : 200,
        signed.page(
          {
            title: refused ? `Error: ${title}` : title,
            area: 'tenants',
            crumbs: tenantCrumbs(read.tenant, ['History', undefined]),
          },
          auditBody({
            title,
            action: `/console/tenants/${read.tenant.id}/history`,
            filters,
            events: data?.result ?? [],
            nextCursor: data?.nextCursor,
            errors: refused ? formErrorsOf(refused) : undefined,
          }),
        ),
      ]
    }),
  )

  router.get('/console/audit', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { filters, cursor } = filtersOf(request.query as Record<string, unknown>)
      const { data, error, response } = await signed.api.GET('/v1/audit-events', {
        params: { query: { ...filters, limit: PAGE, ...(cursor ? { cursor } : {}) } },
      })
      const refused = data ? undefined : apiErrorOf(error, response.status)
      if (refused && refused.code !== 400) return refusalPage(signed, refused)
      const title = 'Platform audit events'
      return [
        refused ? 400 : 200,
        signed.page(
          { title: refused ? `Error: ${title}` : title, area: 'none', crumbs: [['Audit', undefined]] },
          auditBody({
            title,
            action: '/console/audit',
            filters,
            events: data?.result ?? [],
            nextCursor: data?.nextCursor,
            errors: refused ? formErrorsOf(refused) : undefined,
          }),
        ),
      ]
    }),
  )
}
