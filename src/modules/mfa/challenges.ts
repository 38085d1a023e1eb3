import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { randomSecret, sha256 } from '../../crypto/tokens.js'
import { newId } from '../../crypto/uuid7.js'
import type { Database } from '../../db/schema.js'
import {
  CHALLENGE_MAX_ATTEMPTS,
  type ChallengePurpose,
  type ChallengeRow,
  consumeChallenge,
  countWrongAnswer,
  findLiveChallenge,
  insertChallenge,
} from './challenges.repository.js'

/**
 * The challenge store (docs/security.md, "Signing in with a second factor"): a random token of 256 bits
 * for the client, only its SHA-256 kept (like invitation tokens: a token of that much entropy needs no
 * slow hash), single use, bound to one account and purpose, five minutes. The WebAuthn files use it too
 * for their registration and passkey sign-in challenges.
 */

export const CHALLENGE_TTL_MS = 5 * 60_000

export interface ChallengeRequest {
  purpose: ChallengePurpose
  /** The account it is bound to; null only for a passkey sign-in with a discoverable credential. */
  userId: string | null
  /** A step-up's session: the token the answer earns belongs to it. */
  sessionId?: string | null
  /** The WebAuthn challenge of the options sent with it (base64url), when a passkey may answer. */
  webauthnChallenge?: string | null
  /** A sign-in's requested token lifetime, given to the token the answer earns. */
  tokenTtl?: number | null
}

export interface IssuedChallenge {
  /** What the client sends back (`mfaToken`). */
  token: string
  id: string
  expiresAt: Date
}

export async function createChallenge(
  db: Kysely<Database>,
  clock: Clock,
  request: ChallengeRequest,
): Promise<IssuedChallenge> {
  const token = randomSecret()
  const now = clock.now()
  const issued = { token, id: newId(), expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS) }
  await insertChallenge(db, {
    id: issued.id,
    tokenHash: sha256(token),
    userId: request.userId,
    purpose: request.purpose,
    sessionId: request.sessionId ?? null,
    webauthnChallenge: request.webauthnChallenge ?? null,
    tokenTtl: request.tokenTtl ?? null,
    created: now,
    expiresAt: issued.expiresAt,
  })
  return issued
}

/** The challenge a client's token names, for `purpose`, while it can be answered; nothing is spent. */
export async function openChallenge(
  db: Kysely<Database>,
  clock: Clock,
  token: string,
  purpose: ChallengePurpose,
): Promise<ChallengeRow | undefined> {
  return findLiveChallenge(db, sha256(token), purpose, clock.now())
}

/**
 * Opens and spends in one go, for a challenge answered once whatever the answer (a WebAuthn ceremony's):
 * the row when this call spent it, undefined when it was unknown, expired, dead or already spent.
 */
export async function takeChallenge(
  db: Kysely<Database>,
  clock: Clock,
  token: string,
  purpose: ChallengePurpose,
): Promise<ChallengeRow | undefined> {
  const row = await openChallenge(db, clock, token, purpose)
  return row && (await consumeChallenge(db, row.id, clock.now())) ? row : undefined
}

/** Spends an opened challenge after a right answer; false when another answer spent it first. */
export async function spendChallenge(
  db: Kysely<Database>,
  clock: Clock,
  challengeId: string,
): Promise<boolean> {
  return consumeChallenge(db, challengeId, clock.now())
}

/** Counts a wrong answer; true when the challenge is now dead (five wrong answers). */
export async function failChallenge(db: Kysely<Database>, challengeId: string): Promise<boolean> {
  return (await countWrongAnswer(db, challengeId)) >= CHALLENGE_MAX_ATTEMPTS
}
