import type { FastifyRequest } from 'fastify'
import type { ApiKeyActor } from '../../access/actor.js'
import type { Authenticator } from '../auth/authenticator.js'
import { ScimError } from './scim-error.js'

/** The challenge of every 401 on the SCIM endpoint: only a bearer token is accepted there. */
export const SCIM_CHALLENGE = 'Bearer realm="tenantry-scim"'

function unauthorized(detail: string): ScimError {
  return new ScimError(401, detail, undefined, { 'www-authenticate': SCIM_CHALLENGE })
}

/**
 * `Authorization: Bearer <token>` of a live `scim` key (docs/scim.md), only on its own tenant's endpoint:
 * missing, wrong, expired, disabled or an ordinary key → 401; another tenant's id in the path → 404.
 */
export async function scimActor(
  authenticator: Authenticator,
  request: FastifyRequest,
  tenantId: string,
): Promise<ApiKeyActor> {
  const header = request.headers.authorization
  if (!header) throw unauthorized('A SCIM bearer token is required')
  const space = header.indexOf(' ')
  if (space < 0 || header.slice(0, space).toLowerCase() !== 'bearer') {
    throw unauthorized('Only "Authorization: Bearer <token>" is accepted here')
  }
  const actor = await authenticator.scimKey(header.slice(space + 1).trim())
  if (!actor) throw unauthorized('Invalid, expired or revoked SCIM token')
  if (actor.tenantId !== tenantId.toLowerCase()) throw new ScimError(404, 'Resource not found')
  return actor
}
