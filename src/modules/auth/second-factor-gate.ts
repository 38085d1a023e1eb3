import type { SignInClient } from './session-tokens.js'

/**
 * What authentication asks of second factors (docs/security.md, "Signing in with a second factor"),
 * implemented by modules/mfa (sign-in.service.ts) and handed to the Authenticator when the app is wired:
 * mfa builds on auth, never the other way round.
 */

/** A password sign-in that checked out, before any session exists. */
export interface PasswordSignIn {
  userId: string
  /** The hash checked: a session is written only while it is still the person's. */
  passwordHash: string | undefined
  client: SignInClient
  ttlSeconds: number
  /** The one-call form for command-line clients: `{username, password, code}`. */
  code?: string | undefined
}

export interface SecondFactorGate {
  /**
   * After a right password: undefined when the account has no factor (the password alone signs in);
   * otherwise the token `code` earned, or a thrown 401 `mfa_required` carrying the challenge to answer.
   */
  passwordSignIn(signIn: PasswordSignIn): Promise<string | undefined>
  /** `Basic email:password`: a thrown 401 `mfa_required` when the account has a factor or a policy needs one. */
  checkBasic(userId: string): Promise<void>
  /** Whether the account has an active factor (`POST /v1/login`'s `mfa`). */
  hasFactor(userId: string): Promise<boolean>
}
