import type { Readable } from 'node:stream'
import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { decodeCursor, type Page, toPage } from '../../http/pagination.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import { type AuditFilter, listAuditEvents, toAuditEventRecord } from './audit.repository.js'
import type { AuditEvent, ListAuditEventsQuery } from './audit.schemas.js'
import { auditCsvStream } from './audit-csv.js'

/** `GET /v1/tenants/{t}/audit-events`: VIEW_AUDIT_LOG in t; the events of t and its sub-tenants. */
export async function listTenantAuditEvents(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListAuditEventsQuery,
): Promise<Page<AuditEvent>> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, ['VIEW_AUDIT_LOG'])
  return readEvents(ctx, query, tenant.id)
}

/** `GET /v1/audit-events`: the platform role's VIEW_AUDIT_LOG; every event. */
export async function listPlatformAuditEvents(
  ctx: ServiceContext,
  actor: Actor,
  query: ListAuditEventsQuery,
): Promise<Page<AuditEvent>> {
  requirePlatformAuditLog(actor)
  return readEvents(ctx, query, undefined)
}

/** The filters of a query, for a list page or an export. */
function filterOf(query: ListAuditEventsQuery, subtreeOf: string | undefined): Omit<AuditFilter, 'limit'> {
  return {
    subtreeOf,
    action: query.action,
    actorId: query.actorId?.toLowerCase(),
    targetId: query.targetId?.toLowerCase(),
    since: query.since ? new Date(query.since) : undefined,
    until: query.until ? new Date(query.until) : undefined,
    afterId: decodeCursor(query.cursor),
  }
}

/** `GET /v1/tenants/{t}/audit-events?format=csv`: the filtered events as a CSV stream (audit-csv.ts). */
export async function exportTenantAuditEvents(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  query: ListAuditEventsQuery,
): Promise<Readable> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, ['VIEW_AUDIT_LOG'])
  return auditCsvStream(ctx.db, filterOf(query, tenant.id))
}

/** `GET /v1/audit-events?format=csv`: the platform's filtered events as a CSV stream. */
export async function exportPlatformAuditEvents(
  ctx: ServiceContext,
  actor: Actor,
  query: ListAuditEventsQuery,
): Promise<Readable> {
  requirePlatformAuditLog(actor)
  return auditCsvStream(ctx.db, filterOf(query, undefined))
}

function requirePlatformAuditLog(actor: Actor): void {
  if (actor.kind !== 'user' || !actor.platformPermissions.has('VIEW_AUDIT_LOG')) {
    throw new AppError('permission_denied', 'VIEW_AUDIT_LOG is required in the platform role')
  }
}

async function readEvents(
  ctx: ServiceContext,
  query: ListAuditEventsQuery,
  subtreeOf: string | undefined,
): Promise<Page<AuditEvent>> {
  const limit = query.limit ?? 100
  const rows = await listAuditEvents(ctx.db, { ...filterOf(query, subtreeOf), limit })
  const page = toPage(rows, limit, (row) => row.id)
  return {
    nextCursor: page.nextCursor,
    items: page.items.map(toAuditEventRecord),
  }
}
