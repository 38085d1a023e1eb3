import type { Readable } from 'node:stream'
import type { Static } from 'typebox'
import type { TypedApp } from '../../../http/typed-app.js'
import { type ApiError, apiErrorOf } from '../api/client.js'
import { Cursor, Query, TenantPath, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { formErrorsOf, Refusal } from '../kit/refusals.js'
import { readTenantFor, tenantCrumbs } from '../kit/tenant-scope.js'
import { auditBody, type Filters } from './audit.views.js'
import { eventNames } from './audit-names.js'

const PAGE = 50

/**
 * The filter form (a GET): plain text, so what the API refuses (an action it does not know, a time that
 * is not one) is shown beside its field, the actor as typed — an e-mail is looked up.
 */
const AuditQuery = Query({
  action: Typed(256),
  targetId: Typed(256),
  since: Typed(64),
  until: Typed(64),
  actor: Typed(256),
  actorId: Typed(256),
  cursor: Cursor,
})
type AuditFilters = Static<typeof AuditQuery>

/** What the filter form asks: the API's filters, the actor as typed, or the refusal of that actor. */
interface Asked {
  filters: Filters
  actor: string
  cursor: string | undefined
  errors?: Record<string, string>
}

/**
 * The audit trail (docs/console-admin.md "Audit"): a tenant's events with its sub-tenants' (its "History"), and the
 * platform's, filtered by action, actor (an e-mail is looked up), target and time, paged; each event's
 * changes as before → after; and the filtered list as a CSV file, streamed from the API as it comes.
 */
export function auditRoutes(router: TypedApp, pages: ConsolePages): void {
  async function asked(signed: Signed, query: AuditFilters): Promise<Asked> {
    const filters: Filters = {}
    for (const name of ['action', 'targetId', 'since', 'until'] as const) {
      const value = (query[name] ?? '').trim()
      if (value) filters[name] = value
    }
    const actor = (query.actor || query.actorId || '').trim()
    const cursor = query.cursor || undefined
    if (!actor.includes('@'))
      return { filters: actor ? { ...filters, actorId: actor } : filters, actor, cursor }
    const { data } = await signed.api.GET('/v1/users', { params: { query: { email: actor } } })
    const user = data?.result[0]
    if (!user) return { filters, actor, cursor, errors: { actor: 'is not the e-mail of a user you can see' } }
    return { filters: { ...filters, actorId: user.id }, actor, cursor }
  }

  /** The events page, or the same form with the refusal of a filter beside its field (400). */
  async function eventsPage(
    signed: Signed,
    o: { title: string; action: string; crumbs: [string, string | undefined][]; area: 'tenants' | 'audit' },
    a: Asked,
    result: {
      data?: { result: Parameters<typeof auditBody>[0]['events']; nextCursor?: string }
      refused?: ApiError
    },
  ): Promise<PageResult> {
    const errors =
      a.errors ?? (result.refused ? formErrorsOf(result.refused, { actorId: 'actor' }) : undefined)
    const events = result.data?.result ?? []
    const names = await eventNames(signed, events)
    return [
      errors ? 400 : 200,
      signed.page(
        { title: o.title, area: o.area, crumbs: o.crumbs },
        auditBody({
          title: o.title,
          action: o.action,
          actor: a.actor,
          filters: a.filters,
          events,
          names,
          nextCursor: result.data?.nextCursor,
          errors,
        }),
      ),
    ]
  }

  /** The API's CSV export, passed through as a download; a refused filter shows on the events page. */
  async function download(
    signed: Signed,
    url: string,
    filename: string,
    a: Asked,
    onRefused: (refused: ApiError) => Promise<PageResult>,
  ): Promise<PageResult> {
    const query = new URLSearchParams({ format: 'csv' })
    for (const [name, value] of Object.entries(a.filters)) if (value) query.set(name, value)
    const answer = await signed.stream(`${url}?${query.toString()}`)
    if (answer.status === 200)
      return { download: { type: 'text/csv; charset=utf-8', filename, body: answer.body } }
    const refused = apiErrorOf(JSON.parse((await readAll(answer.body)) || '{}'), answer.status)
    if (refused.code === 400) return onRefused(refused)
    throw new Refusal(refused)
  }

  async function tenantHistory(
    signed: Signed,
    tenantId: string,
    query: AuditFilters,
    csv: boolean,
  ): Promise<PageResult> {
    const read = await readTenantFor(signed, tenantId)
    const a = await asked(signed, query)
    const title = `History of ${read.tenant.name}`
    const page = {
      title,
      action: `/console/tenants/${read.tenant.id}/history`,
      crumbs: tenantCrumbs(read.tenant, ['History', undefined]),
      area: 'tenants' as const,
    }
    if (a.errors) return eventsPage(signed, page, a, {})
    const url = `/v1/tenants/${read.tenant.id}/audit-events`
    if (csv)
      return download(signed, url, `history-${read.tenant.id}.csv`, a, (refused) =>
        eventsPage(signed, page, a, { refused }),
      )
    const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/audit-events', {
      params: {
        path: { tenantId: read.tenant.id },
        query: { ...a.filters, limit: PAGE, ...(a.cursor ? { cursor: a.cursor } : {}) },
      },
    })
    const refused = data ? undefined : apiErrorOf(error, response.status)
    if (refused && refused.code !== 400) throw new Refusal(refused)
    return eventsPage(signed, page, a, { ...(data ? { data } : {}), ...(refused ? { refused } : {}) })
  }

  async function platformEvents(signed: Signed, query: AuditFilters, csv: boolean): Promise<PageResult> {
    const a = await asked(signed, query)
    const page = {
      title: 'Platform audit events',
      action: '/console/audit',
      crumbs: [['Audit', undefined]] as [string, string | undefined][],
      area: 'audit' as const,
    }
    if (a.errors) return eventsPage(signed, page, a, {})
    if (csv)
      return download(signed, '/v1/audit-events', 'audit-events.csv', a, (refused) =>
        eventsPage(signed, page, a, { refused }),
      )
    const { data, error, response } = await signed.api.GET('/v1/audit-events', {
      params: { query: { ...a.filters, limit: PAGE, ...(a.cursor ? { cursor: a.cursor } : {}) } },
    })
    const refused = data ? undefined : apiErrorOf(error, response.status)
    if (refused && refused.code !== 400) throw new Refusal(refused)
    return eventsPage(signed, page, a, { ...(data ? { data } : {}), ...(refused ? { refused } : {}) })
  }

  const tenant = { schema: { hide: true, params: TenantPath, querystring: AuditQuery } }
  router.get('/console/tenants/:tenantId/history', tenant, (request, reply) =>
    pages.signedIn(request, reply, (signed) =>
      tenantHistory(signed, request.params.tenantId, request.query, false),
    ),
  )
  router.get('/console/tenants/:tenantId/history.csv', tenant, (request, reply) =>
    pages.signedIn(request, reply, (signed) =>
      tenantHistory(signed, request.params.tenantId, request.query, true),
    ),
  )
  const platform = { schema: { hide: true, querystring: AuditQuery } }
  router.get('/console/audit', platform, (request, reply) =>
    pages.signedIn(request, reply, (signed) => platformEvents(signed, request.query, false)),
  )
  router.get('/console/audit.csv', platform, (request, reply) =>
    pages.signedIn(request, reply, (signed) => platformEvents(signed, request.query, true)),
  )
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8')
}
