import type { ServiceContext } from '../../context.js'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import { BATCHING, StatementBatcher } from '../../db/statement-batcher.js'
import { batchedStatementSize } from '../../http/metrics.js'
import { type ScimError, uniqueness } from './scim-error.js'
import {
  insertLinkedUser,
  insertProvisionedUsers,
  type LinkWrite,
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
    throw scimConstraintError(error, userName, email) ?? error
  }
}

/**
 * Links a platform user who exists (scim-user-statement.ts, insertLinkedUser): its membership, its event
 * and its SCIM row in one statement. Undefined when no platform user has the e-mail (nothing written). A
 * membership made meanwhile is 409 `already_member`; a userName or e-mail that another SCIM user of the
 * tenant took meanwhile is 409 uniqueness — and nothing of the link is left behind.
 */
export async function writeLinkedUser(
  ctx: ServiceContext,
  write: LinkWrite,
): Promise<Provisioned | undefined> {
  const { user_name: userName, email_key: email } = write.scim
  try {
    return await withConstraintErrors(() => insertLinkedUser(ctx.db, write))
  } catch (error) {
    throw scimConstraintError(error, userName, email) ?? error
  }
}

/**
 * The SCIM row's own keys (migration 0013) as SCIM's 409 uniqueness — its userName or e-mail taken by
 * another SCIM user of the tenant, or the person given a SCIM row meanwhile — else undefined.
 */
export function scimConstraintError(
  error: unknown,
  userName: string,
  email: string | null,
): ScimError | undefined {
  const constraint = (error as { constraint?: string }).constraint
  if (constraint === 'scim_users_user_name_key')
    return uniqueness(`A user with userName "${userName}" already exists`)
  if (constraint === 'scim_users_email_key' || constraint === 'scim_users_pkey')
    return uniqueness(`A user with e-mail "${email}" already exists`)
  return undefined
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
