import type { ColumnType, Generated } from 'kysely'
import type { AUDIT_ACTOR_TYPES, OutboxStatus } from './closed-lists.js'
import type { Defaulted, Json, Timestamp } from './column-types.js'

/**
 * The tables of what happened and who is told (docs/webhooks.md): the outbox of mail and webhook
 * deliveries, the webhooks and their deliveries, and the audit trail. Part of the Database of db/schema.ts;
 * columns mirror migrations/ exactly.
 */

export interface OutboxTable {
  id: string
  tenant_id: string | null
  kind: string
  payload: Json<Record<string, unknown>>
  status: Generated<OutboxStatus>
  attempts: Generated<number>
  next_attempt_at: Timestamp
  locked_until: Timestamp | null
  last_error: string | null
  created: Timestamp
  sent_at: Timestamp | null
  /** Rows sharing a key (a webhook's id) go out one at a time in `seq` order. */
  ordering_key: Defaulted<string | null>
  seq: ColumnType<string, never, never>
}

export interface WebhooksTable {
  tenant_id: string
  id: string
  url: string
  events: string[]
  active: boolean
  include_sub_tenants: boolean
  secret: Json<Record<string, unknown>>
  /** The secret a rotation replaced (an envelope, like `secret`), still signing until it expires. */
  previous_secret: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>
  previous_secret_expires: ColumnType<Date | null, Date | null | undefined, Date | null>
  failing_since: Timestamp | null
  disabled_reason: string | null
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export interface WebhookDeliveriesTable {
  tenant_id: string
  webhook_id: string
  id: string
  message_id: string
  event_id: string | null
  action: string
  attempt: number
  outcome: 'succeeded' | 'failed'
  response_status: number | null
  error: string | null
  duration_ms: number
  attempted_at: Timestamp
}

export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number]

export interface AuditEventsTable {
  id: string
  occurred: Timestamp
  actor_type: AuditActorType
  actor_id: string | null
  action: string
  tenant_id: string | null
  target_type: string
  target_id: string | null
  /** field → [before, after]; secrets and passwords only ever as "********". */
  changes: Json<Record<string, [unknown, unknown]>>
  request_id: string | null
  ip: string | null
}
