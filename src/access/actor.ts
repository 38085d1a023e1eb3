import type { SsoOrigin } from '../crypto/tokens.js'
import type { AuthMethod } from '../db/schema.js'
import type { Permission } from './permissions.js'

/** Who is calling: resolved once per request from the Authorization header (http/auth.ts). */
export type Actor = UserActor | ApiKeyActor

export interface UserActor {
  kind: 'user'
  /** The id written to createdBy/updatedBy. */
  principalId: string
  userId: string
  email: string
  /** "First Last", or the e-mail when the user has no name: how mails name the user (e.g. as inviter). */
  displayName: string
  platformRoleId: string
  /**
   * Permissions of the platform role; they apply in every tenant. Empty for a credential born of a
   * tenant's single sign-on: a tenant's identity provider cannot vouch for platform power.
   */
  platformPermissions: ReadonlySet<Permission>
  /**
   * How the credential was proved: absent for the platform password (a password token, Basic), set for
   * a token from a tenant's single sign-on. Decides where the password rule lets it act (access/effective.ts).
   */
  sso?: SsoOrigin
  /**
   * How the person proved who they are (a token's `amr`; `pwd` for Basic). Set on every actor the
   * authenticator makes; absent on one made to name a change's author (a one-time link acting as its user).
   */
  authMethods?: readonly AuthMethod[]
  /** The session of the token used (docs/security.md); absent for Basic, which carries no token. */
  sessionId?: string
  /**
   * When the person last proved who they are for this token (its `auth_time`, seconds since the epoch):
   * the sign-in, or the latest step-up (docs/security.md, "Step-up"). Absent for Basic.
   */
  authTime?: number
}

export interface ApiKeyActor {
  kind: 'api_key'
  principalId: string
  keyId: string
  /** The key acts in this tenant and its descendants only. */
  tenantId: string
  roleId: string
  permissions: ReadonlySet<Permission>
  /** The user who created the key: the default admin of tenants the key creates. */
  createdBy: string
}

/** The user an action is attributed to where a user id is required (e.g. a tenant's admin). */
export function actingUserId(actor: Actor): string {
  return actor.kind === 'user' ? actor.userId : actor.createdBy
}

/** How mails name a user: "First Last", or the e-mail when the user has no name. */
export function userDisplayName(user: { first_name: string; last_name: string; email: string }): string {
  return `${user.first_name} ${user.last_name}`.trim() || user.email
}
