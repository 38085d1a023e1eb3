import type { ServiceContext } from '../../context.js'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import { BATCHING, StatementBatcher } from '../../db/statement-batcher.js'
import { batchedStatementSize } from '../../http/metrics.js'
import { uniqueness } from './scim-error.js'
import {
  insertProvisionedUsers,
  type Provisioned,
  type ProvisionWrite,
  provisionShape,
} from './scim-user-statement.js'

/**
 * Writes a new person that SCIM creates (scim-user-statement.ts) and answers the stored membership.
 * Creates that arrive together are written together, in one statement (db/statement-batcher.ts;
 * docs/performance.md, "Writes written together"), each still answered alone: a batch that fails runs
 * each again on its own, so a refused create is refused alone. A taken e-mail is `email_taken` (the
 * caller links that user instead); a userName or e-mail that another SCIM user of the tenant holds is
 * 409 uniqueness.
 */
export async function writeProvisionedUser(ctx: ServiceContext, write: ProvisionWrite): Promise<Provisioned> {
  const { user_name: userName, email_key: email } = write.scim
  try {
    return await withConstraintErrors(() => provisionBatcher(ctx).run(write), { email: email ?? '' })
  } catch (error) {
    const constraint = (error as { code?: string; constraint?: string }).constraint
    if (constraint === 'scim_users_user_name_key')
      throw uniqueness(`A user with userName "${userName}" already exists`)
    if (constraint === 'scim_users_email_key')
      throw uniqueness(`A user with e-mail "${email}" already exists`)
    throw error
  }
}

/** The app's batcher of SCIM creates. Two creates of one e-mail never share a statement. */
function provisionBatcher(ctx: ServiceContext): StatementBatcher<ProvisionWrite, Provisioned> {
  return ctx.statementBatchers.for('scim users', () => {
    return new StatementBatcher((writes) => insertProvisionedUsers(ctx.db, writes), {
      shapeOf: provisionShape,
      conflictKey: (write) => write.member.membership.email,
      ...BATCHING,
      onBatch: (size) => batchedStatementSize.observe({ write: 'scim_user' }, size),
    })
  })
}
