import type { FastifyReply, FastifyRequest } from 'fastify'
import { apiClient } from '../api/client.js'
import type { ConsolePages } from '../kit/pages.js'

/** How long a console session (and the platform token behind it) lives at most: one working day. */
export const SESSION_TTL_SECONDS = 12 * 3600

/**
 * A token the API accepts becomes a session: the row holds the token and the identity just read (the
 * first page draws it without asking again), the browser the cookie.
 */
export async function startSession(
  pages: ConsolePages,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  ttlSeconds: number,
  next: string,
): Promise<FastifyReply> {
  const login = await apiClient(pages.app, token, request.ip).POST('/v1/login')
  if (!login.data) return reply.redirect('/console/sign-in', 303)
  const now = pages.ctx.clock.now()
  const id = await pages.sessions.create(
    login.data.result,
    token,
    now,
    new Date(now.getTime() + ttlSeconds * 1000),
  )
  return reply.header('set-cookie', pages.sessionCookie(id, ttlSeconds)).redirect(next, 303)
}
