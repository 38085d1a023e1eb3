import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Database } from '../db/schema.js'
import { recordAudit } from './audit-trail.js'
import { claimExpiredInvitations, deleteAttemptsBefore, deleteEventsBefore } from './webhook.repository.js'

/**
 * The outbox worker's periodic work beside delivery (outbox-worker.ts `sweep`): invitation expiry and the
 * retention of the audit trail.
 */

/**
 * `invitation.expired` events for invitations whose window passed (docs/webhooks.md: within a minute);
 * idempotent across workers: claimExpiredInvitations marks them in the same statement.
 */
export async function expireInvitations(db: Kysely<Database>, clock: Clock): Promise<void> {
  const now = clock.now()
  await db.transaction().execute(async (tx) => {
    const expired = await claimExpiredInvitations(tx, now)
    await recordAudit(
      tx,
      clock,
      { kind: 'system' },
      expired.map((row) => ({
        action: 'invitation.expired',
        tenantId: row.tenant_id,
        target: { type: 'membership', id: row.user_id },
        changes: { invitationExpiryDate: [row.invitation_expiry_date?.toISOString() ?? null, null] },
      })),
    )
  })
}

/**
 * Deletes audit events and delivery attempts older than the retention (TENANTRY_AUDIT_RETENTION_DAYS),
 * events in bounded batches.
 */
export async function deleteOldHistory(
  db: Kysely<Database>,
  now: Date,
  retentionDays: number,
  logger: Logger,
): Promise<void> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000)
  let deleted = 0
  for (
    let batch = await deleteEventsBefore(db, before);
    batch > 0;
    batch = await deleteEventsBefore(db, before)
  ) {
    deleted += batch
  }
  await deleteAttemptsBefore(db, before)
  if (deleted > 0)
    logger.info({ deleted, before: before.toISOString() }, 'audit retention: old events deleted')
}
