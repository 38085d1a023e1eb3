import { type Actor, actingUserId, userDisplayName } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { randomSecret, sha256 } from '../../crypto/tokens.js'
import { findUserById } from '../users/users.repository.js'

/**
 * A one-time invitation token: 256 random bits, URL-safe, shown only in the e-mail. The database keeps
 * its SHA-256 (a unique index finds it) and the outbox keeps it encrypted until the mail is sent.
 */
export interface IssuedInvitation {
  token: string
  tokenHash: string
  /** now + TENANTRY_INVITATION_TTL, by the injected clock. */
  expiresAt: Date
}

export function issueInvitation(ctx: Pick<ServiceContext, 'clock' | 'config'>): IssuedInvitation {
  const token = randomSecret()
  return {
    token,
    tokenHash: sha256(token),
    expiresAt: new Date(ctx.clock.now().getTime() + ctx.config.invitationTtlSeconds * 1000),
  }
}

/** What a token from a client must look like before it is worth a database look-up. */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/

export function invitationTokenHash(token: string): string | undefined {
  return TOKEN_SHAPE.test(token) ? sha256(token) : undefined
}

/**
 * How the e-mail names the inviter: the acting user's name, or its e-mail when it has none. A user's
 * name comes with its credentials (cached, and dropped when users change); an API key's creator is read.
 */
export async function inviterName(ctx: ServiceContext, actor: Actor): Promise<string> {
  if (actor.kind === 'user') return actor.displayName
  const user = await findUserById(ctx.db, actingUserId(actor))
  return user ? userDisplayName(user) : 'An administrator'
}
