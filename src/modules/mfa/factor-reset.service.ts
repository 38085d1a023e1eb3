import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { factorResetMailRow } from '../../outbox/mail/factor-reset-mail.js'
import { writeUnit } from '../../outbox/write-unit.js'
import { recordAudit } from '../audit/audit.repository.js'
import type { SessionTokens } from '../auth/session-tokens.js'
import { revokeSessions } from '../sessions/sessions.repository.js'
import { otherUserToActOn } from '../sessions/sessions.service.js'
import { adminName } from '../users/password-reset.service.js'
import { deleteUserFactors } from './factors.repository.js'
import { deleteRecoveryCodes } from './recovery-codes.repository.js'
import { requireRecentSecondFactor } from './step-up.js'

/**
 * An administrator's reset of a person's second factors (docs/security.md, "Passkeys", "An
 * administrator's reset"): for the person who lost their phone and their recovery codes. The same
 * authorization as signing that person out everywhere — MANAGE_ALL_USERS over them and the role ceiling,
 * so nobody strips the factors of someone more powerful — never oneself, and a step-up operation, so a
 * stolen administrator's session cannot open someone's account to a password alone. In one transaction:
 * every factor and recovery code goes, every session ends (a session won with the old factors, or by
 * whoever prompted the reset, must not outlive it), the person is e-mailed, and `user.mfa_reset` records
 * what went.
 */
export async function resetUserFactors(
  ctx: ServiceContext,
  sessions: SessionTokens,
  actor: Actor,
  userId: string,
): Promise<void> {
  const target = await otherUserToActOn(
    ctx,
    actor,
    userId,
    'You cannot reset your own second factors: remove one with DELETE /v1/me/factors/{id}, or ask another administrator',
  )
  const id = target.id
  await requireRecentSecondFactor(ctx, actor)
  const now = ctx.clock.now()
  const mail = factorResetMailRow(
    {
      userId: id,
      to: target.email,
      resetBy: adminName(actor),
      resetByEmail: actor.kind === 'user' ? actor.email : null,
      at: now.toISOString(),
    },
    now,
  )
  const ended = await writeUnit(ctx).transaction(async (tx) => {
    const factors = await deleteUserFactors(tx.db, id)
    const recoveryCodes = await deleteRecoveryCodes(tx.db, id)
    const revoked = await revokeSessions(tx.db, id, { except: undefined }, now)
    await tx.mail(mail)
    await recordAudit(tx.db, ctx.clock, actor, {
      action: 'user.mfa_reset',
      tenantId: null,
      target: { type: 'user', id },
      changes: {
        factors: [factors, []],
        recoveryCodes: [recoveryCodes, 0],
        sessions: [revoked.map(([session]) => session), []],
      },
    })
    return revoked
  })
  sessions.ended(ended)
  ctx.secondFactors.hasFactor.delete(id)
}
