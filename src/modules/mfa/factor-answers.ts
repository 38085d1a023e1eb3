export type { WebAuthnAnswers, WebAuthnRequest } from '../../context.js'

import { AppError } from '../../errors.js'

/**
 * How a second factor is answered (docs/security.md, "Signing in with a second factor"): a TOTP code, a
 * recovery code, or a WebAuthn assertion. The sign-in's and step-up's routes take one of the three; this
 * module checks codes itself and hands assertions to the WebAuthn implementation (webauthn-answers.ts),
 * which app.ts wires into the ServiceContext (`secondFactors.webauthn`; the interface is context.ts's). Until one is wired, an assertion is refused (400 naming `webauthn`): nothing
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
