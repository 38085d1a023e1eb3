import type { Kysely } from 'kysely'
import { uuidv7 } from 'uuidv7'
import type { Actor } from '../../access/actor.js'
import type { Clock } from '../../clock.js'
import type { AuditActorType, Database } from '../../db/schema.js'
import { currentRequest } from '../../http/request-context.js'

/** What a secret or password looks like in an event's changes (API.md §13). */
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

function actorOf(actor: AuditActor): { type: AuditActorType; id: string | null } {
  if (actor.kind === 'user') return { type: 'user', id: actor.userId }
  if (actor.kind === 'api_key') return { type: 'apiKey', id: actor.keyId }
  return { type: 'system', id: null }
}

/**
 * Writes audit events with the executor the change itself runs on — the transaction of the change — so
 * an event exists exactly when its change committed. The request id and address come from the request
 * being served (http/request-context.ts); outside a request they are null.
 */
export async function recordAudit(
  db: Kysely<Database>,
  clock: Clock,
  actor: AuditActor,
  records: AuditRecord | AuditRecord[],
): Promise<void> {
  const list = Array.isArray(records) ? records : [records]
  if (list.length === 0) return
  const who = actorOf(actor)
  const request = currentRequest()
  const occurred = clock.now()
  await db
    .insertInto('audit_events')
    .values(
      list.map((record) => ({
        id: uuidv7(),
        occurred,
        actor_type: who.type,
        actor_id: who.id,
        action: record.action,
        tenant_id: record.tenantId,
        target_type: record.target.type,
        target_id: record.target.id,
        changes: JSON.stringify(record.changes ?? {}),
        request_id: request?.requestId ?? null,
        ip: request?.ip ?? null,
      })),
    )
    .execute()
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
