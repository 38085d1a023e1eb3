import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { recordAudit } from '../audit/audit.repository.js'
import { person } from './factors.service.js'
import {
  newRecoveryCodes,
  normalizeRecoveryCode,
  RECOVERY_CODES_PER_SET,
  recoveryCodeHash,
  recoveryCodeKey,
} from './recovery-codes.js'
import { recoveryCodeSummary, replaceRecoveryCodes } from './recovery-codes.repository.js'
import { requireRecentSecondFactor } from './step-up.js'

/**
 * `POST /v1/me/recovery-codes` (docs/security.md, "Recovery"; a step-up operation): a new set of ten,
 * shown this once; the old set, used or not, stops working in the same transaction
 * (`mfa.recovery_codes_generated`).
 */
export async function generateRecoveryCodes(ctx: ServiceContext, actor: Actor): Promise<{ codes: string[] }> {
  const me = person(actor)
  await requireRecentSecondFactor(ctx, me)
  const codes = newRecoveryCodes()
  const key = recoveryCodeKey(ctx.keys)
  const hashes = codes.map((code) => recoveryCodeHash(key, me.userId, normalizeRecoveryCode(code) ?? code))
  await ctx.db.transaction().execute(async (tx) => {
    const before = await recoveryCodeSummary(tx, me.userId)
    await replaceRecoveryCodes(tx, me.userId, hashes, ctx.clock.now())
    await recordAudit(tx, ctx.clock, me, {
      action: 'mfa.recovery_codes_generated',
      tenantId: null,
      target: { type: 'user', id: me.userId },
      changes: { recoveryCodesRemaining: [before?.remaining ?? null, RECOVERY_CODES_PER_SET] },
    })
  })
  return { codes }
}
