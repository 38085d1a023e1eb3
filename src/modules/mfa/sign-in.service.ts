import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { TOKEN_TTL } from '../auth/auth.schemas.js'
import type { PasswordSignIn, SecondFactorGate } from '../auth/second-factor-gate.js'
import type { SessionTokens, SignIn, SignInClient } from '../auth/session-tokens.js'
import { unauthorized } from '../auth/unauthorized.js'
import { checkAccountNotLocked, checkAnswer, countWrongAnswer, type RightAnswer } from './answers.service.js'
import { factorKinds, holdsFactor, mfaRequired, offerChallenge } from './challenge-offer.js'
import { openChallenge, spendChallenge } from './challenges.js'
import type { FactorAnswer } from './factor-answers.js'
import { hasActiveFactor } from './factors.repository.js'
import { personNeedsFactor } from './policy.js'

/**
 * Signing in with a second factor (docs/security.md, "Signing in with a second factor"): a right
 * password for an account with an active factor earns a challenge, not a session; the session starts
 * when the challenge is answered (POST /v1/tokens/mfa), or at once when the one-call form's code is
 * right. Its token's `amr` says both (`pwd` and `otp`, `rec`, `hwk` or `swk`), `auth_time` when.
 */

const WRONG = 'wrong, or already used'

/** The gate the Authenticator calls after a right password, and for Basic. */
export function secondFactorGate(ctx: ServiceContext, sessions: SessionTokens): SecondFactorGate {
  return {
    passwordSignIn: (signIn) => passwordSignIn(ctx, sessions, signIn),
    checkBasic: async (userId) => {
      if (await basicRefusedCached(ctx, userId)) {
        throw new AppError(
          'mfa_required',
          'This account has a second factor, or a policy requires one, which Basic cannot carry: sign in at POST /v1/tokens (programs use API keys)',
          undefined,
          { 'www-authenticate': 'Bearer realm="tenantry"' },
        )
      }
    },
    hasFactor: (userId) => hasActiveFactor(ctx.db, userId),
  }
}

/**
 * Whether Basic with a password is refused for the person — an active factor, or a policy requiring one —
 * from a cache of a few seconds (Basic asks on every request; a factor change here clears it).
 */
async function basicRefusedCached(ctx: ServiceContext, userId: string): Promise<boolean> {
  return ctx.secondFactors.hasFactor.getOrLoad(
    userId,
    async () => (await hasActiveFactor(ctx.db, userId)) || (await personNeedsFactor(ctx, userId)),
  )
}

async function passwordSignIn(
  ctx: ServiceContext,
  sessions: SessionTokens,
  signIn: PasswordSignIn,
): Promise<string | undefined> {
  const { userId, ttlSeconds, code } = signIn
  const kinds = await factorKinds(ctx, userId)
  if (!holdsFactor(kinds)) return undefined
  const offer = { purpose: 'sign_in', tokenTtl: ttlSeconds } as const
  if (code === undefined) throw mfaRequired(await offerChallenge(ctx, userId, offer, kinds))
  await checkAccountNotLocked(ctx, userId)
  const right = await checkAnswer(ctx, userId, { code }, null)
  if (!right) {
    await countWrongAnswer(ctx, userId, undefined)
    const challenge = await offerChallenge(ctx, userId, { purpose: 'sign_in', tokenTtl: ttlSeconds })
    throw mfaRequired(challenge, `The code is ${WRONG}`, { code: WRONG })
  }
  const password = signIn.passwordHash ? { passwordHash: signIn.passwordHash } : {}
  return startSession(sessions, userId, right, signIn.client, ttlSeconds, password)
}

/** The end of a sign-in challenge's life: unknown, expired, spent or dead. */
function challengeGone(): AppError {
  return unauthorized(
    'This sign-in challenge is unknown, expired, used or has had too many wrong answers: sign in again',
  )
}

/** `POST /v1/tokens/mfa`: the challenge's answer → a new session won with both factors. */
export async function completeSignIn(
  ctx: ServiceContext,
  sessions: SessionTokens,
  mfaToken: string,
  answer: FactorAnswer,
  client: SignInClient,
): Promise<{ token: string; ttl: number }> {
  const challenge = await openChallenge(ctx.db, ctx.clock, mfaToken, 'sign_in')
  const userId = challenge?.user_id
  if (!challenge || !userId) throw challengeGone()
  await checkAccountNotLocked(ctx, userId)
  const right = await checkAnswer(ctx, userId, answer, challenge.webauthn_challenge)
  if (!right) {
    if (await countWrongAnswer(ctx, userId, challenge)) throw challengeGone()
    const field =
      answer.code !== undefined ? 'code' : answer.recoveryCode !== undefined ? 'recoveryCode' : 'webauthn'
    const again = { token: mfaToken, factors: await factorKinds(ctx, userId) }
    throw mfaRequired(again, `The second factor is ${WRONG}`, { [field]: WRONG })
  }
  // Of two right answers racing, one session: the challenge is spent once.
  if (!(await spendChallenge(ctx.db, ctx.clock, challenge.id))) throw challengeGone()
  const ttl = challenge.token_ttl ?? TOKEN_TTL.default
  // A password changed (a reset, say) since the challenge was issued ends that sign-in too.
  const password = { passwordUnchangedSince: challenge.created }
  return { token: await startSession(sessions, userId, right, client, ttl, password), ttl }
}

async function startSession(
  sessions: SessionTokens,
  userId: string,
  right: RightAnswer,
  client: SignInClient,
  ttlSeconds: number,
  password: Pick<SignIn, 'passwordHash' | 'passwordUnchangedSince'>,
): Promise<string> {
  const signIn: SignIn = { userId, authMethods: ['pwd', right.method], client, ...password }
  const started = await sessions.start(signIn, ttlSeconds)
  if (!started) throw unauthorized('Invalid username or password')
  return started.token
}
