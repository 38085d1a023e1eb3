import type { Actor } from '../../access/actor.js'
import { ROLE_IDS } from '../../access/permissions.js'
import type { RoleCatalog } from '../../access/role-catalog.js'
import type { UserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { lockAdministratorsBesides, SIGNED_OUT_STATUSES } from './administrators.repository.js'

type Executor = Parameters<typeof lockAdministratorsBesides>[0]

/** What decides a user's standing: whether it can sign in, and the platform roles it holds. */
export type Standing = Pick<UserRow, 'status' | 'role_id' | 'additional_role_ids'>

/**
 * Nobody locks themselves out (docs/product.md#offboarding-and-erasure refuses erasing oneself; the same holds for disabling or
 * demoting oneself): a change of one's own user that would leave it unable to sign in, or holding fewer
 * platform permissions, is a 409 self_lockout. An administrator who means it asks another one.
 */
export function checkNotLockingOutSelf(
  actor: Actor,
  before: Standing & { id: string },
  after: Standing,
  roles: RoleCatalog,
): void {
  if (actor.kind !== 'user' || actor.userId !== before.id) return
  if (canSignIn(before) && !canSignIn(after)) {
    throw new AppError('self_lockout', 'Users cannot disable themselves; another administrator can', {
      status: 'cannot disable oneself',
    })
  }
  const held = platformPermissions(before, roles)
  const kept = platformPermissions(after, roles)
  const lost = [...held].filter((permission) => !kept.has(permission))
  if (lost.length > 0) {
    throw new AppError(
      'self_lockout',
      `Users cannot demote themselves (the change would drop ${lost.join(', ')}); another administrator can`,
      { roleId: 'cannot demote oneself' },
    )
  }
}

/**
 * The platform keeps at least one Platform Administrator who can sign in: a change (disable, demote,
 * erase) that would take the last one away is a 409 last_platform_administrator, whoever asks. Runs in the
 * change's transaction, which it holds against a concurrent change of the other administrators.
 */
export async function checkAnAdministratorRemains(
  tx: Executor,
  before: Standing & { id: string },
  after: Standing | 'erased',
): Promise<void> {
  if (!isAdministrator(before)) return
  if (after !== 'erased' && isAdministrator(after)) return
  if ((await lockAdministratorsBesides(tx, before.id)) > 0) return
  throw new AppError(
    'last_platform_administrator',
    'This is the last Platform Administrator who can sign in; make another one before disabling, demoting or erasing it',
    after === 'erased'
      ? undefined
      : { [after.status === before.status ? 'roleId' : 'status']: 'would leave no Platform Administrator' },
  )
}

function canSignIn(standing: Standing): boolean {
  return !(SIGNED_OUT_STATUSES as readonly string[]).includes(standing.status)
}

/** A Platform Administrator who can sign in (the built-in role, as its main or an additional role). */
function isAdministrator(standing: Standing): boolean {
  const admin = ROLE_IDS.platformAdministrator
  return canSignIn(standing) && (standing.role_id === admin || standing.additional_role_ids.includes(admin))
}

function platformPermissions(standing: Standing, roles: RoleCatalog): Set<string> {
  const held = new Set<string>()
  if (!canSignIn(standing)) return held
  for (const roleId of [standing.role_id, ...standing.additional_role_ids]) {
    for (const permission of roles.get(roleId)?.permissions ?? []) held.add(permission)
  }
  return held
}
