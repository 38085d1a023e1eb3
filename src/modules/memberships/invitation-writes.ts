import type { ServiceContext } from '../../context.js'
import { StatementBatcher } from '../../db/statement-batcher.js'
import { invitationBatchSize } from '../../http/metrics.js'
import {
  type InvitationOutcome,
  type InvitationWrite,
  insertMembershipsByEmail,
  invitationShape,
} from './memberships.repository.js'

/**
 * At most this many invitations in one statement: past it, a batch's share of the fixed cost is small,
 * while its text (one copy per invitation, prepared per connection) keeps growing.
 */
export const MAX_INVITATIONS_PER_STATEMENT = 16
/**
 * At most this many invitation statements at once, so that they leave most of the pool (10 connections
 * by default) to the other requests; the writes that arrive meanwhile wait for the next statement.
 */
export const MAX_INVITATION_STATEMENTS = 4

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
      maxBatch: MAX_INVITATIONS_PER_STATEMENT,
      maxInFlight: MAX_INVITATION_STATEMENTS,
      onBatch: (size) => invitationBatchSize.observe(size),
    })
  })
}
