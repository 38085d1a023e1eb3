import { AppError } from '../../errors.js'

/**
 * How a second factor is answered (docs/security.md, "Signing in with a second factor"): a TOTP code, a
 * recovery code, or a WebAuthn assertion. The sign-in's and step-up's routes take one of the three; this
 * module checks codes itself and hands assertions to the WebAuthn implementation (webauthn-answers.ts),
 * which app.ts wires in. Until one is wired, an assertion is refused (400 naming `webauthn`): nothing
 * pretends passkeys work.
 */

/** What a person sends to answer a challenge: exactly one of these. */
export interface FactorAnswer {
  code?: string | undefined
  recoveryCode?: string | undefined
  /** An AuthenticationResponseJSON (@simplewebauthn/browser's startAuthentication). */
  webauthn?: Record<string, unknown> | undefined
}

/** The method a right answer adds to the token's `amr`. */
export type SecondFactorMethod = 'otp' | 'rec' | 'hwk' | 'swk'

/** The request options a challenge carries when the account has a passkey, and their challenge. */
export interface WebAuthnRequest {
  /** PublicKeyCredentialRequestOptionsJSON: sent to the client as the challenge's `webauthn`. */
  options: Record<string, unknown>
  /** The options' challenge (base64url), kept with the mfa challenge (`webauthn_challenge`). */
  challenge: string
}

/**
 * The WebAuthn half of answering a challenge, implemented by webauthn-answers.ts. Both calls are for one
 * account: a sign-in's or step-up's challenge is bound to it.
 */
export interface WebAuthnAnswers {
  /** Request options over the account's active passkeys (userVerification "required"); none: undefined. */
  requestOptions(userId: string): Promise<WebAuthnRequest | undefined>
  /**
   * Verifies an assertion against the account's passkeys and the challenge its options carried (origin,
   * relying party, user verification, a counter that only grows — recorded with
   * factors.repository.ts recordPasskeyUse). The factor and the amr it earns; undefined for a wrong
   * answer (counted as one); a 400 naming `webauthn` for one that is not an assertion at all.
   */
  verify(
    userId: string,
    response: Record<string, unknown>,
    expectedChallenge: string,
  ): Promise<{ factorId: string; amr: 'hwk' | 'swk' } | undefined>
}

/** The refusal of an assertion when no WebAuthn implementation is wired, or the account has no passkey. */
export function noPasskey(): AppError {
  return new AppError('validation_failed', 'There is no passkey on this account', {
    webauthn: 'no passkey on this account',
  })
}

/** Exactly one answer: a 400 naming the fields otherwise. */
export function oneAnswer(answer: FactorAnswer): 'code' | 'recoveryCode' | 'webauthn' {
  const given = (['code', 'recoveryCode', 'webauthn'] as const).filter((k) => answer[k] !== undefined)
  if (given.length === 1) return given[0] as 'code' | 'recoveryCode' | 'webauthn'
  const message = given.length === 0 ? 'one of code, recoveryCode or webauthn is required' : 'send only one'
  throw new AppError('validation_failed', `Answer with exactly one second factor: ${message}`, {
    code: message,
    recoveryCode: message,
    webauthn: message,
  })
}
