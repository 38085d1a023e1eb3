import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { type Actor, userDisplayName } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { newId } from '../../crypto/uuid7.js'
import { AppError, invalidField } from '../../errors.js'
import { recordAudit } from '../audit/audit.repository.js'
import { findUserById } from '../users/users.repository.js'
import { createChallenge, openChallenge, spendChallenge } from './challenges.js'
import { findFactorByCredentialId, insertFactor } from './factors.repository.js'
import { factorRecord, person } from './factors.service.js'
import type { Factor } from './mfa.schemas.js'
import { requireRecentSecondFactor } from './step-up.js'
import {
  challengeTokenOf,
  creationOptions,
  encodeChallenge,
  relyingParty,
  verifyRegistration,
} from './webauthn.js'
import { activePasskeys, storedCredential } from './webauthn-answers.js'

/**
 * Enrolling a passkey (docs/security.md, "Passkeys"): creation options for the caller — its passkeys
 * excluded, user verification required — under a challenge bound to the caller and to enrolment, single
 * use, five minutes; then the browser's response, checked by the library and stored. The client sends
 * back only the response: the challenge it answers is read from its clientDataJSON and looked up by hash.
 * Adding a factor to an account that already has one is a step-up operation, so a stolen session cannot
 * add its own authenticator.
 */

const DEFAULT_NAME = 'Passkey'

/** The response was not a valid answer to a live enrolment challenge of the caller: 400 naming it. */
function refused(problem: string): AppError {
  return invalidField('response', problem, `The passkey was not enrolled: ${problem}`)
}

export async function passkeyCreationOptions(
  ctx: ServiceContext,
  actor: Actor,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const me = person(actor)
  await requireRecentSecondFactor(ctx, me)
  const user = await findUserById(ctx.db, me.userId)
  if (!user) throw new AppError('unauthorized', 'This user is gone')
  const existing = (await activePasskeys(ctx, me.userId)).map(storedCredential)
  const challenge = await createChallenge(ctx.db, ctx.clock, {
    purpose: 'webauthn_registration',
    userId: me.userId,
  })
  const who = { id: user.id, email: user.email, displayName: userDisplayName(user) }
  return creationOptions(relyingParty(ctx.config), who, existing, challenge.token)
}

export async function enrolPasskey(
  ctx: ServiceContext,
  actor: Actor,
  body: { name?: string | undefined; response: RegistrationResponseJSON },
): Promise<Factor> {
  const me = person(actor)
  await requireRecentSecondFactor(ctx, me)
  const { response } = body
  const token = challengeTokenOf(response)
  const challenge = token && (await openChallenge(ctx.db, ctx.clock, token, 'webauthn_registration'))
  // Another person's challenge, or a sign-in's, is no enrolment of the caller's: refused unspent.
  if (!token || !challenge || challenge.user_id !== me.userId)
    throw refused('it answers no live enrolment challenge of yours (ask for new options)')
  if (!(await spendChallenge(ctx.db, ctx.clock, challenge.id)))
    throw refused('its challenge was already used (ask for new options)')
  const credential = await verifyRegistration(relyingParty(ctx.config), response, encodeChallenge(token))
  if (!credential)
    throw refused('the authenticator’s answer did not verify (origin, user verification, signature)')
  if (await findFactorByCredentialId(ctx.db, credential.credentialId))
    throw refused('this passkey is already enrolled')
  const factor = { id: newId(), name: body.name ?? DEFAULT_NAME, created: ctx.clock.now() }
  await ctx.db.transaction().execute(async (tx) => {
    await insertFactor(tx, {
      ...factor,
      userId: me.userId,
      type: 'webauthn',
      status: 'active',
      ...credential,
    })
    await recordAudit(tx, ctx.clock, me, {
      action: 'mfa.factor_added',
      tenantId: null,
      target: { type: 'user', id: me.userId },
      changes: { factor: [null, factorRecord({ ...factor, type: 'webauthn' })] },
    })
  })
  ctx.secondFactors.hasFactor.delete(me.userId)
  return {
    id: factor.id,
    type: 'webauthn',
    name: factor.name,
    status: 'active',
    created: factor.created.toISOString(),
    lastUsed: null,
  }
}
