import { Type } from 'typebox'
import { TenantParams } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { AuditEventSchema, ListAuditEventsQuery } from './audit.schemas.js'
import { listPlatformAuditEvents, listTenantAuditEvents } from './audit.service.js'

const tags = ['audit']
const filters =
  'Newest first. Filters: action (exact, or a family such as "membership.*"), actorId, targetId, since ' +
  '(inclusive), until (exclusive). Keyset pagination: limit (default 100) and the nextCursor of the page before.'
const ListResponse = Type.Object({
  result: Type.Array(AuditEventSchema),
  nextCursor: Type.Optional(Type.String()),
})

/** The audit trail, read-only (API.md §13). */
export const auditRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/tenants/:tenantId/audit-events',
    {
      schema: {
        tags,
        operationId: 'listTenantAuditEvents',
        errors: ['tenant_not_found', 'permission_denied'],
        summary: 'List the audit events of a tenant and its sub-tenants',
        description: `Needs VIEW_AUDIT_LOG effective in the tenant. ${filters}`,
        params: TenantParams,
        querystring: ListAuditEventsQuery,
        response: { 200: ListResponse },
      },
    },
    async (request) => {
      const page = await listTenantAuditEvents(ctx, request.actor, request.params.tenantId, request.query)
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
        description: `Needs VIEW_AUDIT_LOG in the caller’s platform role. ${filters}`,
        querystring: ListAuditEventsQuery,
        response: { 200: ListResponse },
      },
    },
    async (request) => {
      const page = await listPlatformAuditEvents(ctx, request.actor, request.query)
      return { result: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
    },
  )
}
