import type { Transaction } from 'kysely'
import type { Database, MembershipStatus } from '../../db/schema.js'
import { type Changes, recordAudit, recordOfChange } from '../audit/audit.repository.js'
import { updateMembership } from '../memberships/membership-update.js'
import type { Membership } from '../memberships/memberships.schemas.js'
import type { ScimCall } from './scim-context.js'
import type { Stored } from './scim-values.js'

/**
 * A SCIM user's row and the membership status its `active` asks for, stored as one change of one record
 * (docs/webhooks.md, docs/scim.md): one transaction and one event — `membership.status_changed` holding the status and
 * the attributes' changes when the status moves, else `scim_user.updated`. A status move that fails
 * (the role ceiling, a concurrent move) leaves the SCIM row unwritten too.
 */

/**
 * The status `active` asks of a membership now in `status`, or undefined when it stays: false disables
 * from any status (a directory may, planDirectoryMove); true enables or accepts; absent re-enables only a
 * disabled member.
 */
export function statusFor(
  status: MembershipStatus,
  active: boolean | undefined,
): MembershipStatus | undefined {
  if (active === false) return status === 'disabled' ? undefined : 'disabled'
  if (status !== 'accepted' && (active === true || status === 'disabled')) return 'accepted'
  return undefined
}

/**
 * The stored attributes that differ, as [before, after] (absent as null). Compared as JSON with sorted
 * keys: the stored side comes back from jsonb with its keys reordered, and an unchanged `emails` must
 * not show as changed.
 */
export function attributeChanges(before: Stored, after: Stored): Changes {
  const changes: Changes = {}
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[key] ?? null
    const now = after[key] ?? null
    if (canonicalJson(was) !== canonicalJson(now)) changes[key] = [was, now]
  }
  return changes
}

/** JSON text with every object's keys in order: equal for values jsonb stores alike. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )
}

/**
 * Runs `write` (the SCIM row's insert or update) and moves the membership to `status` (when given) in one
 * transaction, with one event for the membership: the move's, holding the attributes `before` → `after`
 * too, or `scim_user.updated` alone.
 */
export async function storeScimUser(
  call: ScimCall,
  membership: Pick<Membership, 'userId'>,
  status: MembershipStatus | undefined,
  write: (tx: Transaction<Database>) => Promise<void>,
  attributes: { before: Stored; after: Stored },
): Promise<void> {
  const { ctx, actor, tenantId } = call
  const audit = [['scim_user.updated', attributeChanges(attributes.before, attributes.after)]] as const
  if (status !== undefined) {
    await updateMembership(
      ctx,
      actor,
      tenantId,
      membership.userId,
      { status },
      { directory: { write, audit } },
    )
    return
  }
  await ctx.db.transaction().execute(async (tx) => {
    await write(tx)
    const record = recordOfChange({ tenantId, target: { type: 'membership', id: membership.userId } }, audit)
    if (record) await recordAudit(tx, ctx.clock, actor, record)
  })
}
