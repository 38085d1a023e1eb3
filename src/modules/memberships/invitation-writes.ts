import type { ServiceContext } from '../../context.js'
import { BATCHING, StatementBatcher } from '../../db/statement-batcher.js'
import { batchedStatementSize } from '../../http/metrics.js'
import {
  type InvitationOutcome,
  type InvitationWrite,
  insertMembershipsByEmail,
  invitationShape,
} from './memberships.repository.js'

/**
 * The app's invitations outside a transaction, written together when they arrive together
 * (db/statement-batcher.ts; docs/performance.md, "Invitations written together"). Two invitations of one
 * e-mail never share a statement: both count the invitee's mail in one counter row, which one statement
 * cannot update twice.
 */
export function invitationWrites(ctx: ServiceContext): StatementBatcher<InvitationWrite, InvitationOutcome> {
  return ctx.statementBatchers.for('invitations', () => {
    return new StatementBatcher((writes) => insertMembershipsByEmail(ctx.db, writes), {
      shapeOf: invitationShape,
      conflictKey: (write) => write.membership.email,
      ...BATCHING,
      onBatch: (size) => batchedStatementSize.observe({ write: 'invitation' }, size),
    })
  })
}
