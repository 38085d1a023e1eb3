import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * A membership's invitation e-mail is found by tenant and invitee (its delivery state on every read of
 * a tenant user, and the clean-up of unsent mail when an invitation is resent, cancelled or accepted).
 * Without this index each of those scans the outbox.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create index outbox_invitation_idx on outbox (tenant_id, (payload->>'userId'), created)
      where kind = 'invitation_email';
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(db, 'drop index outbox_invitation_idx')
}
