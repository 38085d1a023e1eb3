import type { ApiKeyActor, UserActor } from '../../access/actor.js'
import { heldSecondFactor } from '../../access/mfa-policy.js'
import { isPermission, type Permission } from '../../access/permissions.js'
import type { UserTokenClaims } from '../../crypto/tokens.js'
import type { AuthMethod } from '../../db/schema.js'

/** What the authenticator caches per user and per API key, and the actors it makes of them. */

export interface UserPrincipal extends UserActor {
  status: string
  passwordChangedAtMs: number
  /** The platform requires a second factor for platform roles (docs/security.md, "Policy"). */
  platformMfaRequired: boolean
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

const PASSWORD: readonly AuthMethod[] = ['pwd']

/**
 * The actor of a principal: with the session grant of its token, or — for Basic, which has no session —
 * a password's. `sso` when a tenant's identity provider proved it (no platform power then); no platform
 * power either for a credential won without a second factor while the platform requires one for
 * platform roles (its memberships still count, under their tenants' policies).
 */
export function toUserActor(
  p: UserPrincipal,
  grant?: Pick<UserTokenClaims, 'sessionId' | 'authMethods' | 'sso' | 'authTime'>,
): UserActor {
  const sso = grant?.sso
  const authMethods = grant?.authMethods ?? PASSWORD
  const withoutFactor = p.platformMfaRequired && !heldSecondFactor(authMethods)
  const actor: UserActor = {
    kind: 'user',
    principalId: p.principalId,
    userId: p.userId,
    email: p.email,
    displayName: p.displayName,
    platformRoleId: p.platformRoleId,
    platformPermissions: sso || withoutFactor ? NO_PERMISSIONS : p.platformPermissions,
    authMethods,
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
