import type { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { TenantParams } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { AuditEventSchema, ListAuditEventsQuery } from './audit.schemas.js'
import {
  exportPlatformAuditEvents,
  exportTenantAuditEvents,
  listPlatformAuditEvents,
  listTenantAuditEvents,
} from './audit.service.js'

const tags = ['audit']
const filters =
  'Newest first. Filters: action (exact, or a family such as "membership.*"), actorId, targetId, since ' +
  '(inclusive), until (exclusive). Keyset pagination: limit (default 100) and the nextCursor of the page before.'
const csv =
  ' `format=csv` (or `Accept: text/csv`): the same filtered events — all of them, streamed — as text/csv, one ' +
  'row per event (id, occurred, actorType, actorId, action, tenantId, targetType, targetId, changes as JSON, ' +
  'requestId, ip).'
const ListResponse = Type.Object({
  result: Type.Array(AuditEventSchema),
  nextCursor: Type.Optional(Type.String()),
})
/**
 * A list answers JSON, or the CSV export when asked for it: both media types of the 200 are declared,
 * so the document says what the service sends (docs/api.md, Audit trail).
 */
const ListOrCsv = {
  description: 'A page of events; with `format=csv` or `Accept: text/csv`, every matching event as CSV',
  content: {
    'application/json': { schema: ListResponse },
    'text/csv': {
      schema: Type.String({
        description:
          'A header row, then one row per event: id, occurred, actorType, actorId, action, tenantId, ' +
          'targetType, targetId, changes (JSON), requestId, ip',
        examples: [
          'id,occurred,actorType,actorId,action,tenantId,targetType,targetId,changes,requestId,ip\r\n',
        ],
      }),
    },
  },
}

/** Whether the request asks for the CSV export: `?format=csv`, or `Accept: text/csv` without a format. */
function wantsCsv(format: string | undefined, accept: string | undefined): boolean {
  if (format !== undefined) return format === 'csv'
  return /^\s*text\/csv\b/.test(accept ?? '')
}

function sendCsv(reply: FastifyReply, stream: Readable, name: string) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}"`)
    .header('cache-control', 'no-store')
    .send(stream)
}

/** The audit trail, read-only (docs/webhooks.md), and its CSV export (docs/webhooks.md#csv-export). */
export const auditRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/tenants/:tenantId/audit-events',
    {
      schema: {
        tags,
        operationId: 'listTenantAuditEvents',
        errors: ['tenant_not_found', 'permission_denied'],
        summary: 'List the audit events of a tenant and its sub-tenants',
        description: `Needs VIEW_AUDIT_LOG effective in the tenant. ${filters}${csv}`,
        params: TenantParams,
        querystring: ListAuditEventsQuery,
        response: { 200: ListOrCsv },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params
      if (wantsCsv(request.query.format, request.headers.accept)) {
        const stream = await exportTenantAuditEvents(ctx, request.actor, tenantId, request.query)
        return sendCsv(reply, stream, `audit-events-${tenantId}.csv`)
      }
      const page = await listTenantAuditEvents(ctx, request.actor, tenantId, request.query)
      return { result: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
    },
  )

  app.get(
    '/audit-events',
    {
      schema: {
        tags,
        operationId: 'listAuditEvents',
        errors: ['permission_denied'],
        summary: 'List every audit event of the platform',
        description: `Needs VIEW_AUDIT_LOG in the caller’s platform role. ${filters}${csv}`,
        querystring: ListAuditEventsQuery,
        response: { 200: ListOrCsv },
      },
    },
    async (request, reply) => {
      if (wantsCsv(request.query.format, request.headers.accept)) {
        return sendCsv(
          reply,
          await exportPlatformAuditEvents(ctx, request.actor, request.query),
          'audit-events.csv',
        )
      }
      const page = await listPlatformAuditEvents(ctx, request.actor, request.query)
      return { result: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
    },
  )
}
