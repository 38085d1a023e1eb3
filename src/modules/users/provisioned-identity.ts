import type { Transaction, Updateable } from 'kysely'
import type { Actor } from '../../access/actor.js'
import type { Clock } from '../../clock.js'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { Database, UsersTable } from '../../db/schema.js'
import { recordAudit } from '../audit/audit.repository.js'
import { userUpdateRecords } from './user-audit.js'
import { normalizeEmail } from './user-rules.js'
import { findUserById, updateUser } from './users.repository.js'

/**
 * The identity of a platform user that a tenant's SCIM created (docs/scim.md): its directory keeps its
 * names and e-mail up to date. Only the scim module calls this, and only for users it provisioned, inside
 * the transaction of the SCIM write (so a refused status move leaves the names as they were); an e-mail
 * another user holds is 409 `email_taken`. Writes `user.updated` like any other profile change. Whether
 * anything changed: the caller then drops the access caches, which hold the names.
 */
export async function updateProvisionedIdentity(
  tx: Transaction<Database>,
  clock: Clock,
  actor: Actor,
  userId: string,
  next: { email: string; firstName: string; lastName: string },
): Promise<boolean> {
  const before = await findUserById(tx, userId)
  if (!before || before.status === 'erased') return false
  const changes: Updateable<UsersTable> = {}
  const email = normalizeEmail(next.email)
  if (email !== before.email) changes.email = email
  if (next.firstName !== before.first_name) changes.first_name = next.firstName
  if (next.lastName !== before.last_name) changes.last_name = next.lastName
  if (Object.keys(changes).length === 0) return false
  const after = await withConstraintErrors(() =>
    updateUser(tx, userId, { ...changes, updated: clock.now(), updated_by: actor.principalId }),
  )
  if (after && after !== 'stale') await recordAudit(tx, clock, actor, userUpdateRecords(before, after))
  return true
}
