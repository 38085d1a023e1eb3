import { type Static, Type } from 'typebox'
import { PERMISSIONS } from '../../access/permissions.js'
import { AUTH_METHODS } from '../../db/schema.js'
import { Body, Nullable, Timestamp, Uuid } from '../../http/schemas.js'

export const TOKEN_TTL = { default: 86_400, max: 7 * 86_400, min: 60 } as const

export const TokenRequestBody = Body(
  {
    username: Type.String({ minLength: 1, maxLength: 254, description: 'An e-mail, or an API key id' }),
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'The password, or the API key secret',
    }),
    ttl: Type.Optional(
      Type.Integer({
        minimum: TOKEN_TTL.min,
        maximum: TOKEN_TTL.max,
        description: `Lifetime in seconds; default ${TOKEN_TTL.default}, at most 7 days`,
      }),
    ),
    code: Type.Optional(
      Type.String({
        minLength: 6,
        maxLength: 12,
        pattern: '^[0-9 ]+$',
        errorMessage: 'must be the six digits the authenticator app shows',
        description:
          'The one-call form for command-line clients: the authenticator app’s code with the password, for an ' +
          'account with a second factor (docs/security.md, "Signing in with a second factor")',
      }),
    ),
  },
  { examples: [{ username: 'admin@tenantry.local', password: 'correct horse battery staple', ttl: 3600 }] },
)
export type TokenRequest = Static<typeof TokenRequestBody>

export const TokenResponse = Type.Object(
  { token: Type.String({ description: 'A JWT for `Authorization: Bearer <token>`' }), ttl: Type.Integer() },
  { examples: [{ token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwMTkzYTZmMSJ9.c2lnbmF0dXJl', ttl: 3600 }] },
)

const PermissionName = Type.Enum(PERMISSIONS, { type: 'string' })

/** How a sign-in was won, as a token's `amr` claim (docs/api.md, "Authentication"). */
export const AuthMethodName = Type.Enum(AUTH_METHODS, {
  type: 'string',
  description:
    'pwd: a password; sso: a tenant’s single sign-on; otp, hwk, swk, rec: a one-time code, a hardware or ' +
    'software key, a recovery code',
})

export const LoginSchema = Type.Object({
  userId: Uuid(),
  username: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  platformRoleId: Uuid(),
  platformRoleName: Type.String(),
  platformPermissions: Type.Array(PermissionName),
  authMethods: Type.Array(AuthMethodName, {
    description: 'How the credential used was won: the token’s `amr`; `["pwd"]` for Basic with a password',
  }),
  mfa: Type.Boolean({
    description: 'Whether the account has an active second factor (an authenticator app or a passkey)',
  }),
  tenants: Type.Array(
    Type.Object({
      tenantId: Uuid(),
      tenantName: Type.String(),
      tenantActive: Type.Boolean(),
      roleId: Uuid(),
      roleName: Type.String(),
      tenantPermissions: Type.Array(PermissionName),
      password: Type.Boolean({ description: 'Whether the platform password may be used in this tenant' }),
      ssoRequired: Type.Boolean({
        description: 'This credential grants nothing here: sign in through the tenant’s identity provider',
      }),
      mfaRequired: Type.Boolean({
        description:
          'The tenant’s effective policy requires a second factor (its own or an ancestor’s mfaPolicy)',
      }),
      mfaDeadline: Nullable(
        Timestamp({
          description:
            'When the policy requires a second factor this credential was not won with: the moment it stops ' +
            'counting here (past: 403 mfa_required now). Null when nothing is missing',
        }),
      ),
    }),
  ),
})
export type Login = Static<typeof LoginSchema>
