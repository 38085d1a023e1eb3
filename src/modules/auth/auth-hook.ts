import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Actor } from '../../access/actor.js'
import { type CounterStore, RequestLimiter } from '../../http/rate-limit.js'
import type { Authenticator, InvitationCredential } from './authenticator.js'
import { unauthorized } from './unauthorized.js'

/**
 * Which credentials a route takes, declared in its route config:
 * - `required` (the default): a user or an API key;
 * - `public`: none (tokens, invitation look-ups, health, docs);
 * - `invitation`: a user, an API key, or an invitation token (the existing clients' accept call).
 */
export type AuthMode = 'required' | 'public' | 'invitation'

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode
  }
  interface FastifyRequest {
    /** Set on every route that is not public. */
    actor: Actor
    /** Set instead of `actor` when an `invitation` route was called with an invitation token. */
    invitation: InvitationCredential | undefined
  }
}

/** Resolves credentials before the body is read, so a stranger gets 401 before anything else. */
export function registerAuthentication(
  app: FastifyInstance,
  authenticator: Authenticator,
  options: { perCredentialPerMinute?: number; counters?: CounterStore; now?: () => number } = {},
): void {
  const limiter = options.perCredentialPerMinute
    ? new RequestLimiter(options.perCredentialPerMinute, options.now, options.counters, 'api-requests')
    : undefined
  app.decorateRequest('actor', null as never)
  app.decorateRequest('invitation', undefined)
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const mode = request.routeOptions.config.auth ?? 'required'
    if (mode === 'public' || request.routeOptions.url === undefined) return
    const credential = await authenticator.authenticate(request.headers.authorization, request.ip)
    if (credential.kind === 'invitation') {
      if (mode !== 'invitation') throw unauthorized('Invalid or expired token')
      request.invitation = credential
      return
    }
    await limiter?.take(credential.principalId)
    request.actor = credential
  })
}
