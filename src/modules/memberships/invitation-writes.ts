import type { ServiceContext } from '../../context.js'
import type { NewUserRow } from '../../db/schema.js'
import { BATCHING, StatementBatcher } from '../../db/statement-batcher.js'
import { batchedStatementSize } from '../../http/metrics.js'
import { type AuditEvent, writeAuditEvents } from '../audit/audit.repository.js'
import { insertUserRows } from '../users/users.repository.js'
import {
  type InvitationOutcome,
  type InvitationWrite,
  insertMembershipsByEmail,
  invitationShape,
} from './invitation-statement.js'

/**
 * Writes one invitation (invitation-statement.ts: the membership, its event, its mail and its count) and
 * answers its outcome. With a new platform user (`newUser`, its row and its `user.created` event) the
 * user and the invitation go in one transaction. Otherwise invitations that arrive together are written
 * together, in one statement (db/statement-batcher.ts; docs/performance.md, "Writes written
 * together"), each still answered alone.
 */
export async function writeInvitation(
  ctx: ServiceContext,
  write: InvitationWrite,
  newUser?: { row: NewUserRow; event: AuditEvent },
): Promise<InvitationOutcome> {
  if (!newUser) return invitationBatcher(ctx).run(write)
  return ctx.db.transaction().execute(async (tx) => {
    await insertUserRows(tx, [newUser.row])
    await writeAuditEvents(tx, [newUser.event])
    const [outcome] = await insertMembershipsByEmail(tx, [write])
    return outcome ?? {}
  })
}

/**
 * The app's batcher of invitations. Two invitations of one e-mail never share a statement: both count the
 * invitee's mail in one counter row, which one statement cannot update twice.
 */
function invitationBatcher(ctx: ServiceContext): StatementBatcher<InvitationWrite, InvitationOutcome> {
  return ctx.statementBatchers.for('invitations', () => {
    return new StatementBatcher((writes) => insertMembershipsByEmail(ctx.db, writes), {
      shapeOf: invitationShape,
      conflictKey: (write) => write.membership.email,
      ...BATCHING,
      onBatch: (size) => batchedStatementSize.observe({ write: 'invitation' }, size),
    })
  })
}
