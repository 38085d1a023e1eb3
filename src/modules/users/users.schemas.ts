import { type Static, Type } from 'typebox'
import { ROLE_IDS } from '../../access/permissions.js'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../crypto/passwords.js'
import { USER_STATUSES } from '../../db/schema.js'
import { Body, Email, Nullable, PageQuery, ShortText, Timestamp, Uuid } from '../../http/schemas.js'

/** Platform user shapes (docs/product.md#platform-users, docs/api.md#platform-users). */

export const MAX_ADDITIONAL_ROLES = 20

const UserStatus = Type.Enum(USER_STATUSES, {
  type: 'string',
  description: 'Default enabled. A disabled user cannot authenticate.',
})

// The E.164 shape itself is checked in user-rules.ts, where the message can say exactly what is wrong;
// the schema only bounds the length so that nothing huge reaches the rules.
const Telephone = Type.String({
  maxLength: 32,
  errorMessage: 'must be an E.164 number: + then 2–15 digits',
  description: 'E.164: + then the country code and number, 2–15 digits, no leading 0',
})

const Password = Type.String({
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: PASSWORD_MAX_LENGTH,
  errorMessage: `must be ${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters`,
})

export const UserSchema = Type.Object({
  id: Uuid(),
  email: Type.String({ description: 'Stored lower-cased; unique ignoring case' }),
  roleId: Uuid({ description: 'The platform role' }),
  additionalRoleIds: Type.Array(Uuid()),
  firstName: Type.String(),
  lastName: Type.String(),
  externalId: Type.String({ description: 'The user\'s id in a third-party system; "" when none' }),
  personalTelephone: Nullable(Type.String()),
  status: Type.String({ description: USER_STATUSES.join(' | ') }),
  aliasPlatformUserId: Type.String({ description: 'A unique integer issued by the database, as a string' }),
  defaultTenant: Nullable(Uuid()),
  hasPassword: Type.Boolean(),
  resetPasswordExpiryDate: Nullable(
    Timestamp({ description: 'When the live password-reset link expires; null when none' }),
  ),
  resetPasswordEmailStatus: Nullable(
    Type.String({
      description:
        'Delivery state of the live password-reset link’s e-mail (queued | sent | failed); null when no link',
    }),
  ),
  // Null only for the bootstrapped first administrator, whom nobody created.
  createdBy: Nullable(Uuid()),
  updatedBy: Nullable(Uuid()),
  created: Timestamp(),
  updated: Timestamp(),
})
export type User = Static<typeof UserSchema>

// Null means empty for the optional text fields (docs/api.md#platform-users): existing clients send null for "none".
const NullableText = () => Type.Optional(Nullable(ShortText({ description: 'null means ""' })))

export const CreateUserBody = Body(
  {
    email: Email(),
    roleId: Uuid({ description: 'A platform role within the caller’s own platform permissions' }),
    firstName: NullableText(),
    lastName: NullableText(),
    externalId: NullableText(),
    status: Type.Optional(UserStatus),
    personalTelephone: Type.Optional(Nullable(Telephone)),
    additionalRoleIds: Type.Optional(Type.Array(Uuid(), { maxItems: MAX_ADDITIONAL_ROLES })),
  },
  {
    examples: [
      {
        email: 'jane.doe@acme.example',
        roleId: ROLE_IDS.platformUser,
        firstName: 'Jane',
        lastName: 'Doe',
        externalId: 'crm-10042',
        personalTelephone: '+15555550123',
      },
    ],
  },
)
export type CreateUserInput = Static<typeof CreateUserBody>

export const UpdateUserBody = Body(
  {
    firstName: NullableText(),
    lastName: NullableText(),
    externalId: NullableText(),
    personalTelephone: Type.Optional(Nullable(Telephone)),
    defaultTenant: Type.Optional(Nullable(Uuid())),
    roleId: Type.Optional(Uuid()),
    additionalRoleIds: Type.Optional(Type.Array(Uuid(), { maxItems: MAX_ADDITIONAL_ROLES })),
    status: Type.Optional(UserStatus),
    password: Type.Optional(Password),
    currentPassword: Type.Optional(
      Type.String({ maxLength: PASSWORD_MAX_LENGTH, description: 'Required to change one’s own password' }),
    ),
    resetPassword: Type.Optional(
      Type.Boolean({
        description:
          'true: e-mail the user a new password-reset link (needs MANAGE_ALL_USERS over the user; the role ' +
          'ceiling applies). The user’s resetPasswordExpiryDate shows the live link’s expiry.',
      }),
    ),
  },
  { examples: [{ firstName: 'Jane', lastName: 'Doe-Smith', personalTelephone: '+15555550199' }] },
)
export type UpdateUserInput = Static<typeof UpdateUserBody>

export const ListUsersQuery = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Exact e-mail, ignoring case' })),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 254,
      description:
        'Search: users whose e-mail, first name, last name or full name contains this text, ignoring case',
    }),
  ),
  ...PageQuery,
})
export type ListUsersQuery = Static<typeof ListUsersQuery>

export const UserParams = Type.Object({ userId: Uuid() })
