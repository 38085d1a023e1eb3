import { type Kysely, sql } from 'kysely'
import type { Database, MfaChallengesTable } from '../../db/schema.js'

/**
 * Second-factor challenges (migration 0019, `mfa_challenges`; docs/security.md, "Signing in with a second
 * factor"): found by the SHA-256 of the token the client holds, single use, bound to one account and one
 * purpose, five minutes, dead after five wrong answers.
 */

export type ChallengePurpose = MfaChallengesTable['purpose']

/** Wrong answers a challenge survives; the fifth kills it. */
export const CHALLENGE_MAX_ATTEMPTS = 5

export interface ChallengeRow {
  id: string
  user_id: string | null
  purpose: ChallengePurpose
  session_id: string | null
  webauthn_challenge: string | null
  token_ttl: number | null
  attempts: number
  created: Date
  expires_at: Date
}

export interface NewChallenge {
  id: string
  tokenHash: string
  userId: string | null
  purpose: ChallengePurpose
  sessionId?: string | null
  webauthnChallenge?: string | null
  tokenTtl?: number | null
  created: Date
  expiresAt: Date
}

export async function insertChallenge(db: Kysely<Database>, challenge: NewChallenge): Promise<void> {
  await db
    .insertInto('mfa_challenges')
    .values({
      id: challenge.id,
      token_hash: challenge.tokenHash,
      user_id: challenge.userId,
      purpose: challenge.purpose,
      session_id: challenge.sessionId ?? null,
      webauthn_challenge: challenge.webauthnChallenge ?? null,
      token_ttl: challenge.tokenTtl ?? null,
      created: challenge.created,
      expires_at: challenge.expiresAt,
    })
    .execute()
}

/**
 * The challenge of a token hash for `purpose` while it can still be answered: not spent, not expired,
 * fewer than five wrong answers. Reading it spends nothing (consumeChallenge does).
 */
export async function findLiveChallenge(
  db: Kysely<Database>,
  tokenHash: string,
  purpose: ChallengePurpose,
  now: Date,
): Promise<ChallengeRow | undefined> {
  return db
    .selectFrom('mfa_challenges')
    .select([
      'id',
      'user_id',
      'purpose',
      'session_id',
      'webauthn_challenge',
      'token_ttl',
      'attempts',
      'created',
      'expires_at',
    ])
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('attempts', '<', CHALLENGE_MAX_ATTEMPTS)
    .executeTakeFirst()
}

/**
 * Spends a challenge: one conditional UPDATE (`used_at is null and expires_at > now and attempts < 5`), so
 * of two answers racing only one wins. Whether this call spent it.
 */
export async function consumeChallenge(
  db: Kysely<Database>,
  challengeId: string,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('mfa_challenges')
    .set({ used_at: now })
    .where('id', '=', challengeId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('attempts', '<', CHALLENGE_MAX_ATTEMPTS)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Counts a wrong answer to a challenge; the attempts it now has (five or more: dead). */
export async function countWrongAnswer(db: Kysely<Database>, challengeId: string): Promise<number> {
  const row = await db
    .updateTable('mfa_challenges')
    .set({ attempts: sql<number>`attempts + 1` })
    .where('id', '=', challengeId)
    .returning('attempts')
    .executeTakeFirst()
  return row?.attempts ?? CHALLENGE_MAX_ATTEMPTS
}

/** Deletes challenges that can no longer be answered: expired (spent ones too, once expired). */
export async function deleteExpiredChallenges(db: Kysely<Database>, now: Date): Promise<bigint> {
  const result = await db.deleteFrom('mfa_challenges').where('expires_at', '<=', now).executeTakeFirst()
  return result.numDeletedRows
}
