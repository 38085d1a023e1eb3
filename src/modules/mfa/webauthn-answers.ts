import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import type { ServiceContext, WebAuthnAnswers, WebAuthnRequest } from '../../context.js'
import { randomSecret } from '../../crypto/tokens.js'
import { Body } from '../../http/schemas.js'
import { compileBodyValidator } from '../../http/validation.js'
import { recordAudit } from '../audit/audit.repository.js'
import {
  type FactorRow,
  findFactorByCredentialId,
  listActiveFactors,
  recordPasskeyUse,
} from './factors.repository.js'
import {
  amrOf,
  relyingParty,
  requestOptions,
  type StoredCredential,
  userHandleMatches,
  verifyAssertion,
} from './webauthn.js'
import { AuthenticationResponseSchema } from './webauthn.schemas.js'

/**
 * Answering with a passkey (docs/security.md, "Passkeys"): a sign-in's, a step-up's or a passkey-only
 * sign-in's assertion checked against the stored passkey — origin, relying party, user verification,
 * signature, a counter that only grows — and its use recorded. A signed counter that does not grow is
 * refused like any wrong answer and written to the audit trail as `mfa.passkey_counter_regressed`: the
 * passkey may have been copied.
 */

export type PasskeyContext = Pick<ServiceContext, 'db' | 'clock' | 'config'>

/** What a right assertion earns: the factor, and how the token's `amr` names it. */
export interface PasskeyAnswer {
  factorId: string
  amr: 'hwk' | 'swk'
}

/** A stored passkey row as the WebAuthn wrapper checks it. */
export function storedCredential(factor: FactorRow): StoredCredential {
  return {
    credentialId: factor.credential_id ?? '',
    publicKey: factor.public_key ?? new Uint8Array(),
    signCount: Number(factor.sign_count ?? 0),
    transports: factor.transports ?? [],
  }
}

/** The person's active passkeys. */
export async function activePasskeys(ctx: Pick<ServiceContext, 'db'>, userId: string): Promise<FactorRow[]> {
  return (await listActiveFactors(ctx.db, userId)).filter((factor) => factor.type === 'webauthn')
}

const checkAssertionShape = compileBodyValidator(Body({ webauthn: AuthenticationResponseSchema }))

/** An assertion of the right shape, or a 400 naming `webauthn` (and the field within it). */
export function assertionOf(response: unknown): AuthenticationResponseJSON {
  const error = checkAssertionShape({ webauthn: response })
  if (error) throw error
  return response as AuthenticationResponseJSON
}

/**
 * Checks an assertion by `factor` against the options' challenge — its user handle, when it has one, must
 * name the passkey's own account — and records its use (the new counter, only forward: of two uses racing
 * with one counter, one wins). undefined for a wrong answer.
 */
export async function checkPasskey(
  ctx: PasskeyContext,
  factor: FactorRow,
  assertion: AuthenticationResponseJSON,
  expectedChallenge: string,
): Promise<PasskeyAnswer | undefined> {
  if (!userHandleMatches(assertion, factor.user_id)) return undefined
  const stored = storedCredential(factor)
  const check = await verifyAssertion(relyingParty(ctx.config), assertion, expectedChallenge, stored)
  if (!check.ok) {
    if (check.counterRegressed) await recordCounterRegression(ctx, factor, stored.signCount, check.signCount)
    return undefined
  }
  const now = ctx.clock.now()
  if (!(await recordPasskeyUse(ctx.db, factor.id, check.assertion.signCount, now))) return undefined
  return { factorId: factor.id, amr: amrOf(factor.device_type) }
}

async function recordCounterRegression(
  ctx: PasskeyContext,
  factor: FactorRow,
  stored: number,
  presented: number,
): Promise<void> {
  await recordAudit(
    ctx.db,
    ctx.clock,
    { kind: 'system' },
    {
      action: 'mfa.passkey_counter_regressed',
      tenantId: null,
      target: { type: 'user', id: factor.user_id },
      changes: { factorId: [factor.id, factor.id], signCount: [stored, presented] },
    },
  )
}

/** The WebAuthn half of a sign-in's and a step-up's challenge (F's seam, context.ts WebAuthnAnswers). */
export class PasskeyAnswers implements WebAuthnAnswers {
  constructor(private readonly ctx: PasskeyContext) {}

  async requestOptions(userId: string): Promise<WebAuthnRequest | undefined> {
    const passkeys = await activePasskeys(this.ctx, userId)
    if (passkeys.length === 0) return undefined
    const rp = relyingParty(this.ctx.config)
    const options = await requestOptions(rp, passkeys.map(storedCredential), randomSecret())
    return { options: { ...options }, challenge: options.challenge }
  }

  async verify(
    userId: string,
    response: Record<string, unknown>,
    expectedChallenge: string,
  ): Promise<PasskeyAnswer | undefined> {
    const assertion = assertionOf(response)
    const factor = await findFactorByCredentialId(this.ctx.db, assertion.id)
    // Another person's passkey answers nothing for this one: the challenge is bound to the account.
    if (!factor || factor.user_id !== userId) return undefined
    return checkPasskey(this.ctx, factor, assertion, expectedChallenge)
  }
}
