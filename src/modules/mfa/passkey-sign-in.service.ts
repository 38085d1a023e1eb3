import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server'
import type { ServiceContext } from '../../context.js'
import type { FailureLimiter } from '../../http/rate-limit.js'
import type { SessionTokens, SignInClient } from '../auth/session-tokens.js'
import { unauthorized } from '../auth/unauthorized.js'
import { checkAccountNotLocked, countWrongAnswer } from './answers.service.js'
import { createChallenge, takeChallenge } from './challenges.js'
import { findFactorByCredentialId } from './factors.repository.js'
import { challengeTokenOf, encodeChallenge, relyingParty, requestOptions } from './webauthn.js'
import { checkPasskey } from './webauthn-answers.js'

/**
 * Signing in with a passkey alone (docs/security.md, "Passkeys"): request options with an empty
 * allowCredentials — any discoverable passkey of this service may answer — under a challenge bound to
 * passkey sign-in, single use, five minutes, and to no account: the credential id in the answer names the
 * account. A verified passkey with user verification proves two factors (something held, and a PIN or
 * biometric), so the session's `amr` is `hwk` (a security key) or `swk` (a synced passkey) alone.
 *
 * No account enumeration: the options never depend on the `username` a client may send — the same
 * shape, an empty allowCredentials, whether or not the address has an account or a passkey — and an
 * answer is never checked against it either (a refusal that depended on the name would tell it apart).
 * Wrong answers are limited like passwords: per client address (100 a minute), and, once the passkey
 * names an account, per account with every other wrong second factor (10 in 15 minutes, then 429).
 */

export interface PasskeySignInDeps {
  sessions: SessionTokens
  /** Wrong answers per client address (the login limiter's pattern, authenticator.ts). */
  failuresByAddress: FailureLimiter
}

export const PASSKEY_ADDRESS_LIMIT = { limit: 100, windowMs: 60_000 } as const
/** The window of TENANTRY_PASSKEY_OPTIONS_LIMIT_PER_ADDRESS: options asked per client address. */
export const PASSKEY_OPTIONS_WINDOW_MS = 15 * 60_000

export async function passkeySignInOptions(
  ctx: ServiceContext,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const challenge = await createChallenge(ctx.db, ctx.clock, { purpose: 'passkey_sign_in', userId: null })
  return requestOptions(relyingParty(ctx.config), [], challenge.token)
}

const refused = () => unauthorized('The passkey was not accepted: ask for new options and try again')

/** `POST /v1/tokens/passkey`: an assertion → a new session, `{token, ttl}`. */
export async function signInWithPasskey(
  ctx: ServiceContext,
  deps: PasskeySignInDeps,
  response: AuthenticationResponseJSON,
  client: SignInClient,
  ttlSeconds: number,
): Promise<{ token: string; ttl: number }> {
  const address = client.ip ?? ''
  await deps.failuresByAddress.check(address)
  const token = challengeTokenOf(response)
  // The challenge is spent by this answer, right or wrong: a ceremony is one attempt, never replayed.
  const challenge = token && (await takeChallenge(ctx.db, ctx.clock, token, 'passkey_sign_in'))
  const factor = challenge ? await findFactorByCredentialId(ctx.db, response.id) : undefined
  if (!token || !challenge || !factor) {
    await deps.failuresByAddress.fail(address)
    throw refused()
  }
  await checkAccountNotLocked(ctx, factor.user_id)
  const answer = await checkPasskey(ctx, factor, response, encodeChallenge(token))
  if (!answer) {
    await deps.failuresByAddress.fail(address)
    await countWrongAnswer(ctx, factor.user_id, undefined)
    throw refused()
  }
  // A disabled or erased person starts no session (session-store.repository.ts insertSession).
  const signIn = { userId: factor.user_id, authMethods: [answer.amr] as const, client }
  const started = await deps.sessions.start(signIn, ttlSeconds)
  if (!started) throw refused()
  return { token: started.token, ttl: ttlSeconds }
}
