import { type Static, Type } from 'typebox'
import { AUDIT_ACTOR_TYPES } from '../../db/schema.js'
import { LIMITS, Nullable, Timestamp, Uuid } from '../../http/schemas.js'

/** An audit event as the API shows it (docs/webhooks.md). */
export const AuditEventSchema = Type.Object({
  id: Uuid(),
  occurred: Timestamp(),
  actor: Type.Object({
    type: Type.String({ description: AUDIT_ACTOR_TYPES.join(' | ') }),
    id: Nullable(Uuid()),
  }),
  action: Type.String({ description: 'e.g. tenant.created, membership.status_changed' }),
  tenantId: Nullable(Uuid()),
  target: Type.Object({ type: Type.String(), id: Nullable(Uuid()) }),
  changes: Type.Record(Type.String(), Type.Array(Type.Unknown()), {
    description: 'field → [before, after]; secrets and passwords only as "********"',
  }),
  requestId: Nullable(Type.String()),
  ip: Nullable(Type.String()),
})
export type AuditEvent = Static<typeof AuditEventSchema>

export const ListAuditEventsQuery = Type.Object({
  action: Type.Optional(
    Type.String({
      maxLength: 100,
      pattern: '^(\\*|[a-z_]+\\.(\\*|[a-z_]+))$',
      errorMessage: 'must be an action ("membership.removed") or a family ("membership.*")',
    }),
  ),
  actorId: Type.Optional(Uuid()),
  targetId: Type.Optional(Uuid()),
  since: Type.Optional(Timestamp({ description: 'Events at or after this instant' })),
  until: Type.Optional(Timestamp({ description: 'Events before this instant' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.listPage, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
  format: Type.Optional(
    Type.Enum(['json', 'csv'], {
      type: 'string',
      description:
        'csv: every event the filters select (limit ignored; cursor continues after an event), streamed as text/csv',
    }),
  ),
})
export type ListAuditEventsQuery = Static<typeof ListAuditEventsQuery>
