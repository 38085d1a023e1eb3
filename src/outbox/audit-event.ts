/**
 * The audit trail's event model (docs/webhooks.md): what an event holds, who did it, what changed — pure
 * functions, no SQL. The statements that write events are audited-statement.ts (with a change, in its
 * statement) and audit-trail.ts (in the change's transaction).
 */
import type { Selectable } from 'kysely'
import type { Actor } from '../access/actor.js'
import type { Clock } from '../clock.js'
import { newId } from '../crypto/uuid7.js'
import type { AuditActorType, AuditEventsTable } from '../db/schema.js'
import { currentRequest } from '../http/request-context.js'

/** What a secret or password looks like in an event's changes (docs/webhooks.md). */
export const MASKED = '********'

/** field → [before, after]. */
export type Changes = Record<string, [unknown, unknown]>

/** Who did it: a user, an API key, or the service itself (expiry sweeps, bootstrap). */
export type AuditActor = Actor | { kind: 'system' }

export interface AuditRecord {
  /** `<target>.<verb>`, e.g. `tenant.created`, `membership.status_changed`. */
  action: string
  tenantId: string | null
  target: { type: string; id: string | null }
  changes?: Changes
}

/**
 * The one event of one change to one record (docs/webhooks.md: a change to one record is one event, whose
 * `changes` hold every field it changed). `groups` are the record's possible actions, most telling first
 * (a status move before a profile edit), each with the fields it covers; the event is named after the
 * first group with a change and holds the changes of all. None when nothing changed.
 */
export function recordOfChange(
  subject: Pick<AuditRecord, 'tenantId' | 'target'>,
  groups: readonly (readonly [action: string, changes: Changes])[],
): AuditRecord | undefined {
  const changed = groups.filter(([, changes]) => Object.keys(changes).length > 0)
  const first = changed[0]
  if (!first) return undefined
  const changes: Changes = {}
  for (const [, group] of changed) Object.assign(changes, group)
  return { action: first[0], ...subject, changes }
}

/**
 * An event's actor columns; also for the one statement that writes its events itself (a bulk load's
 * users and their user.created events, bulk.repository.ts).
 */
export function auditActorColumns(actor: AuditActor): { type: AuditActorType; id: string | null } {
  if (actor.kind === 'user') return { type: 'user', id: actor.userId }
  if (actor.kind === 'api_key') return { type: 'apiKey', id: actor.keyId }
  return { type: 'system', id: null }
}

/** One event's column values: the one builder of an audit row, whichever statement writes it. */
export interface AuditEvent {
  id: string
  occurred: string
  actorType: AuditActorType
  actorId: string | null
  action: string
  tenantId: string | null
  targetType: string
  targetId: string | null
  changes: string
  requestId: string | null
  ip: string | null
}

/**
 * The columns of audit_events in the order every insert names them, each with its SQL type and the
 * event's field that fills it: the one list the statements derive their text and parameters from.
 */
export const EVENT_COLUMNS = [
  ['id', 'uuid', 'id'],
  ['occurred', 'timestamptz', 'occurred'],
  ['actor_type', 'text', 'actorType'],
  ['actor_id', 'uuid', 'actorId'],
  ['action', 'text', 'action'],
  ['tenant_id', 'uuid', 'tenantId'],
  ['target_type', 'text', 'targetType'],
  ['target_id', 'uuid', 'targetId'],
  ['changes', 'jsonb', 'changes'],
  ['request_id', 'text', 'requestId'],
  ['ip', 'text', 'ip'],
] as const satisfies readonly (readonly [string, string, keyof AuditEvent])[]

export const EVENT_COLUMN_LIST = EVENT_COLUMNS.map(([column]) => column).join(', ')

/**
 * An event of `actor`, now: the request id and address come from the request being served
 * (http/request-context.ts); outside a request they are null.
 */
export function auditEvent(clock: Clock, actor: AuditActor, record: AuditRecord): AuditEvent {
  const who = auditActorColumns(actor)
  const request = currentRequest()
  return {
    id: newId(),
    occurred: clock.now().toISOString(),
    actorType: who.type,
    actorId: who.id,
    action: record.action,
    tenantId: record.tenantId,
    targetType: record.target.type,
    targetId: record.target.id,
    changes: JSON.stringify(record.changes ?? {}),
    requestId: request?.requestId ?? null,
    ip: request?.ip ?? null,
  }
}

/**
 * The fields that differ between two versions of a record, as [before, after]; `secrets` are masked on
 * both sides (a change shows that it happened, never the value).
 */
export function changesBetween<T extends Record<string, unknown>>(
  before: Partial<T> | undefined,
  after: Partial<T>,
  fields: readonly (keyof T & string)[],
  secrets: readonly string[] = [],
): Changes {
  const changes: Changes = {}
  for (const field of fields) {
    const old = before?.[field]
    const now = after[field]
    if (now === undefined || sameValue(old, now)) continue
    changes[field] = secrets.includes(field)
      ? [old === undefined || old === null || old === '' ? old : MASKED, MASKED]
      : [old ?? null, now]
  }
  return changes
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime()
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b)
  return a === b
}

/** An event as the API and webhook bodies show it (docs/webhooks.md). */
export function toAuditEventRecord(row: Selectable<AuditEventsTable>) {
  return {
    id: row.id,
    occurred: row.occurred.toISOString(),
    actor: { type: row.actor_type, id: row.actor_id },
    action: row.action,
    tenantId: row.tenant_id,
    target: { type: row.target_type, id: row.target_id },
    changes: row.changes,
    requestId: row.request_id,
    ip: row.ip,
  }
}
