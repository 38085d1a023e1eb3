import type { Actor, UserActor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { decryptSecret, encryptSecret, isSecretEnvelope } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import { AppError } from '../../errors.js'
import { recordAudit } from '../audit/audit.repository.js'
import { totpSealing } from './answers.service.js'
import {
  deleteFactor,
  type FactorRow,
  findFactor,
  insertFactor,
  listActiveFactors,
  listPendingFactors,
  takeTotpStep,
  totpSecretOf,
} from './factors.repository.js'
import type { Factor, TotpEnrolment } from './mfa.schemas.js'
import { checkFactorMayGo } from './policy.js'
import { deleteRecoveryCodes, recoveryCodeSummary } from './recovery-codes.repository.js'
import { requireRecentSecondFactor } from './step-up.js'
import { matchingStep, newTotpKey, totpEnrolment } from './totp.js'

/**
 * A person's own factors (docs/security.md, "Second factors"): listing them, adding an authenticator app
 * (pending until a code confirms it), removing one. Adding a factor when the account has one, and
 * removing one, are step-up operations: a stolen session cannot add its own authenticator or take the
 * owner's away.
 */

/** A pending TOTP key must be confirmed within this long; after, it is gone. */
export const PENDING_TOTP_MS = 10 * 60_000

export function person(actor: Actor): UserActor {
  if (actor.kind !== 'user')
    throw new AppError('permission_denied', 'Second factors belong to people; an API key has none')
  return actor
}

function factorNotFound(): AppError {
  return new AppError('factor_not_found', 'No factor of yours has this id')
}

/** The event record of a factor: what it is, never its secret. */
export function factorRecord(factor: Pick<FactorRow, 'id' | 'type' | 'name'>) {
  return { id: factor.id, type: factor.type, name: factor.name }
}

export async function listMyFactors(ctx: ServiceContext, actor: Actor): Promise<Factor[]> {
  const me = person(actor)
  const freshPending = ctx.clock.now().getTime() - PENDING_TOTP_MS
  const active = await listActiveFactors(ctx.db, me.userId)
  const pending = await listPendingFactors(ctx.db, me.userId, new Date(freshPending))
  const recovery = await recoveryCodeSummary(ctx.db, me.userId)
  const factors: Factor[] = [...active, ...pending].map((row) => ({
    id: row.id,
    type: row.type,
    name: row.name,
    status: row.status,
    created: row.created.toISOString(),
    lastUsed: row.last_used?.toISOString() ?? null,
  }))
  if (recovery) {
    factors.push({
      id: 'recovery',
      type: 'recovery',
      name: 'Recovery codes',
      status: 'active',
      created: recovery.created.toISOString(),
      lastUsed: recovery.lastUsed?.toISOString() ?? null,
      remaining: recovery.remaining,
    })
  }
  return factors
}

/** `POST /v1/me/factors/totp`: a new key, pending until `verifyTotp`; its secret shown this once. */
export async function enrolTotp(
  ctx: ServiceContext,
  actor: Actor,
  name: string | undefined,
): Promise<TotpEnrolment> {
  const me = person(actor)
  // Adding a factor to an account that has one is a step-up operation.
  await requireRecentSecondFactor(ctx, me)
  const id = newId()
  const key = newTotpKey()
  await insertFactor(ctx.db, {
    id,
    userId: me.userId,
    type: 'totp',
    name: name ?? 'Authenticator app',
    status: 'pending',
    created: ctx.clock.now(),
    totpSecret: { ...encryptSecret(ctx.keys, key, totpSealing(id)) },
  })
  const { uri, qrSvg } = await totpEnrolment(key, me.email)
  return { id, status: 'pending', secret: key, otpauthUri: uri, qrSvg }
}

/** `POST /v1/me/factors/{id}/verify`: a right code turns a pending TOTP active (`mfa.factor_added`). */
export async function verifyTotp(
  ctx: ServiceContext,
  actor: Actor,
  factorId: string,
  code: string,
): Promise<Factor> {
  const me = person(actor)
  const now = ctx.clock.now()
  const factor = await findFactor(ctx.db, me.userId, factorId.toLowerCase())
  if (
    factor?.type !== 'totp' ||
    factor.status !== 'pending' ||
    factor.created.getTime() <= now.getTime() - PENDING_TOTP_MS
  )
    throw factorNotFound()
  const sealed = await totpSecretOf(ctx.db, factor.id)
  if (!sealed || !isSecretEnvelope(sealed.secret)) throw factorNotFound()
  const step = matchingStep(
    decryptSecret(ctx.keys, sealed.secret, totpSealing(factor.id)),
    code,
    now.getTime(),
  )
  const verified = await ctx.db.transaction().execute(async (tx) => {
    if (step === undefined || !(await takeTotpStep(tx, factor.id, step, now, true))) return false
    await recordAudit(tx, ctx.clock, me, {
      action: 'mfa.factor_added',
      tenantId: null,
      target: { type: 'user', id: me.userId },
      changes: { factor: [null, factorRecord(factor)] },
    })
    return true
  })
  if (!verified)
    throw new AppError('validation_failed', 'The code is wrong: type the six digits the app shows now', {
      code: 'wrong',
    })
  ctx.secondFactors.hasFactor.set(me.userId, true)
  return {
    id: factor.id,
    type: 'totp',
    name: factor.name,
    status: 'active',
    created: factor.created.toISOString(),
    lastUsed: now.toISOString(),
  }
}

/**
 * `DELETE /v1/me/factors/{id}` (step-up): removes one factor (`mfa.factor_removed`), or the recovery
 * codes (`recovery`). Never the last factor while a policy requires one (409 mfa_required_by_policy).
 */
export async function removeMyFactor(ctx: ServiceContext, actor: Actor, factorId: string): Promise<void> {
  const me = person(actor)
  await requireRecentSecondFactor(ctx, me)
  const id = factorId.toLowerCase()
  if (id === 'recovery') return removeRecoveryCodes(ctx, me)
  const factor = await findFactor(ctx.db, me.userId, id)
  if (!factor) throw factorNotFound()
  if (factor.status === 'active') await checkFactorMayGo(ctx, me.userId, factor.id)
  await ctx.db.transaction().execute(async (tx) => {
    if (!(await deleteFactor(tx, me.userId, factor.id))) throw factorNotFound()
    if (factor.status !== 'active') return
    await recordAudit(tx, ctx.clock, me, {
      action: 'mfa.factor_removed',
      tenantId: null,
      target: { type: 'user', id: me.userId },
      changes: { factor: [factorRecord(factor), null] },
    })
  })
  ctx.secondFactors.hasFactor.delete(me.userId)
}

async function removeRecoveryCodes(ctx: ServiceContext, me: UserActor): Promise<void> {
  await ctx.db.transaction().execute(async (tx) => {
    const before = await recoveryCodeSummary(tx, me.userId)
    if (!before) throw factorNotFound()
    await deleteRecoveryCodes(tx, me.userId)
    await recordAudit(tx, ctx.clock, me, {
      action: 'mfa.factor_removed',
      tenantId: null,
      target: { type: 'user', id: me.userId },
      changes: { recoveryCodesRemaining: [before.remaining, 0] },
    })
  })
}
