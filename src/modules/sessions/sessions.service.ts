import type { Actor, UserActor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import type { UserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { recordAudit } from '../audit/audit.repository.js'
import type { SessionTokens } from '../auth/session-tokens.js'
import { canReadUser, checkMayActOnUser, isSelf } from '../users/user-visibility.js'
import { findUserById } from '../users/users.repository.js'
import { userNotFound } from '../users/users.service.js'
import { listLiveSessions, revokeSessions, type SessionChoice } from './sessions.repository.js'
import type { Session } from './sessions.schemas.js'

/**
 * A person's sessions (docs/security.md, "Sessions"): listing one's own, signing one of them out, all
 * others, or — as an administrator — every session of someone else. Each revocation is one
 * `session.revoked` event in its transaction, and is refused by this process at once and by every other
 * within a second (SessionTokens.ended, auth/session-revocations.ts).
 */

function person(actor: Actor): UserActor {
  if (actor.kind !== 'user') {
    throw new AppError('permission_denied', 'Sessions belong to people; an API key has none')
  }
  return actor
}

export function sessionNotFound(): AppError {
  return new AppError('session_not_found', 'No live session of yours has this id')
}

export async function listMySessions(
  ctx: ServiceContext,
  sessions: SessionTokens,
  actor: Actor,
): Promise<Session[]> {
  const me = person(actor)
  // What this process has noted of the sessions' use is written first: the list shows one's own use.
  await sessions.activity.settled()
  const rows = await listLiveSessions(ctx.db, me.userId, ctx.clock.now())
  return rows.map((row) => ({
    id: row.id,
    created: row.created.toISOString(),
    lastSeen: row.last_seen.toISOString(),
    ip: row.ip,
    userAgent: row.user_agent,
    authMethods: row.auth_methods,
    current: row.id === me.sessionId,
  }))
}

/** Signs one of the caller's own sessions out — the current one too (signing out); another's is a 404. */
export async function revokeMySession(
  ctx: ServiceContext,
  sessions: SessionTokens,
  actor: Actor,
  sessionId: string,
): Promise<void> {
  const me = person(actor)
  const ended = await endSessions(ctx, sessions, actor, me.userId, { only: sessionId.toLowerCase() })
  if (ended === 0) throw sessionNotFound()
}

/** Signs every session of the caller out but the one of this request (with Basic, which has none: all). */
export async function revokeMyOtherSessions(
  ctx: ServiceContext,
  sessions: SessionTokens,
  actor: Actor,
): Promise<void> {
  const me = person(actor)
  await endSessions(ctx, sessions, actor, me.userId, { except: me.sessionId })
}

/**
 * Signs a person out everywhere: MANAGE_ALL_USERS over that user and the role ceiling, as for any change
 * of the user. Never oneself (409 self_lockout), like erasure: this would end the very session asking, and
 * the person's own are /v1/me/sessions, which says what it keeps.
 */
export async function revokeUserSessions(
  ctx: ServiceContext,
  sessions: SessionTokens,
  actor: Actor,
  userId: string,
): Promise<void> {
  const target = await otherUserToActOn(
    ctx,
    actor,
    userId,
    'This would end your own session: sign your other sessions out with DELETE /v1/me/sessions',
  )
  await endSessions(ctx, sessions, actor, target.id, { except: undefined })
}

/**
 * Another person an administrator acts on without changing a field of theirs (signing them out
 * everywhere; resetting their second factors, mfa/factor-reset.service.ts): never oneself (409
 * self_lockout, `whenSelf` saying where one does it for oneself), one the caller can read (else 404, so
 * ids do not leak) and not erased, with MANAGE_ALL_USERS over them and every role they hold within the
 * caller's ceiling (403). `userId` in any case; the row's id is in lower case.
 */
export async function otherUserToActOn(
  ctx: ServiceContext,
  actor: Actor,
  userId: string,
  whenSelf: string,
): Promise<UserRow> {
  const id = userId.toLowerCase()
  if (isSelf(actor, id)) throw new AppError('self_lockout', whenSelf)
  const target = (await canReadUser(ctx, actor, id)) ? await findUserById(ctx.db, id) : undefined
  if (!target || target.status === 'erased') throw userNotFound()
  await checkMayActOnUser(ctx, actor, target)
  return target
}

/** Ends the chosen sessions and writes their event in one transaction; how many it ended. */
async function endSessions(
  ctx: ServiceContext,
  sessions: SessionTokens,
  actor: Actor,
  userId: string,
  choice: SessionChoice,
): Promise<number> {
  const ended = await ctx.db.transaction().execute(async (tx) => {
    const revoked = await revokeSessions(tx, userId, choice, ctx.clock.now())
    if (revoked.length === 0) return revoked
    await recordAudit(tx, ctx.clock, actor, {
      action: 'session.revoked',
      tenantId: null,
      target: { type: 'user', id: userId },
      changes: { sessions: [revoked.map(([id]) => id), []] },
    })
    return revoked
  })
  sessions.ended(ended)
  return ended.length
}
