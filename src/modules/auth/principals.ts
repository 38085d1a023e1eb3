import type { ApiKeyActor, UserActor } from '../../access/actor.js'
import { isPermission, type Permission } from '../../access/permissions.js'
import type { UserTokenClaims } from '../../crypto/tokens.js'

/** What the authenticator caches per user and per API key, and the actors it makes of them. */

export interface UserPrincipal extends UserActor {
  status: string
  passwordChangedAtMs: number
}

export interface ApiKeyPrincipal extends ApiKeyActor {
  status: string
  /** `api` (/v1) or `scim` (/scim/v2 only). */
  scope: string
  expiresAtMs: number | null
  secretHash: string
}

export function permissionSet(names: string[]): ReadonlySet<Permission> {
  return new Set(names.filter(isPermission))
}

const NO_PERMISSIONS: ReadonlySet<Permission> = new Set()

const PASSWORD: UserActor['authMethods'] = ['pwd']

/**
 * The actor of a principal: with the session grant of its token, or — for Basic, which has no session —
 * a password's. `sso` when a tenant's identity provider proved it (no platform power then).
 */
export function toUserActor(
  p: UserPrincipal,
  grant?: Pick<UserTokenClaims, 'sessionId' | 'authMethods' | 'sso' | 'authTime'>,
): UserActor {
  const sso = grant?.sso
  const actor: UserActor = {
    kind: 'user',
    principalId: p.principalId,
    userId: p.userId,
    email: p.email,
    displayName: p.displayName,
    platformRoleId: p.platformRoleId,
    platformPermissions: sso ? NO_PERMISSIONS : p.platformPermissions,
    authMethods: grant?.authMethods ?? PASSWORD,
  }
  if (grant) {
    actor.sessionId = grant.sessionId
    actor.authTime = grant.authTime
  }
  if (sso) actor.sso = sso
  return actor
}

export function toApiKeyActor(p: ApiKeyPrincipal): ApiKeyActor {
  return {
    kind: 'api_key',
    principalId: p.principalId,
    keyId: p.keyId,
    tenantId: p.tenantId,
    roleId: p.roleId,
    permissions: p.permissions,
    createdBy: p.createdBy,
  }
}
