import { type Static, Type } from 'typebox'
import { ROLE_IDS } from '../../access/permissions.js'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../crypto/passwords.js'
import { Body, Email, Nullable, PageQuery, ShortText, Timestamp, Uuid } from '../../http/schemas.js'

/** Platform user shapes (SPEC §2.2, API.md §4.3). */

export const USER_STATUSES = ['enabled', 'disabled', 'pending', 'invited', 'accepted'] as const
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

export const UserSchema = Type.Object(
  {
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
    resetPasswordExpiryDate: Nullable(Timestamp()),
    // Null only for the bootstrapped first administrator, whom nobody created.
    createdBy: Nullable(Uuid()),
    updatedBy: Nullable(Uuid()),
    created: Timestamp(),
    updated: Timestamp(),
  },
  {
    examples: [
      {
        id: '0193a6f2-5d3a-7b4c-8d2e-1f0a9b8c7d6e',
        email: 'jane.doe@acme.example',
        roleId: ROLE_IDS.platformUser,
        additionalRoleIds: [],
        firstName: 'Jane',
        lastName: 'Doe',
        externalId: 'crm-10042',
        personalTelephone: '+15555550123',
        status: 'enabled',
        aliasPlatformUserId: '1042',
        defaultTenant: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
        hasPassword: true,
        resetPasswordExpiryDate: null,
        createdBy: '0193a6e0-1111-7000-8000-00000000000a',
        updatedBy: '0193a6e0-1111-7000-8000-00000000000a',
        created: '2026-11-22T10:15:00Z',
        updated: '2026-11-22T10:15:00Z',
      },
    ],
  },
)
export type User = Static<typeof UserSchema>

export const CreateUserBody = Body(
  {
    email: Email(),
    roleId: Uuid({ description: 'A platform role within the caller’s own platform permissions' }),
    firstName: Type.Optional(ShortText()),
    lastName: Type.Optional(ShortText()),
    externalId: Type.Optional(ShortText()),
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
    firstName: Type.Optional(ShortText()),
    lastName: Type.Optional(ShortText()),
    externalId: Type.Optional(ShortText()),
    personalTelephone: Type.Optional(Nullable(Telephone)),
    defaultTenant: Type.Optional(Nullable(Uuid())),
    roleId: Type.Optional(Uuid()),
    additionalRoleIds: Type.Optional(Type.Array(Uuid(), { maxItems: MAX_ADDITIONAL_ROLES })),
    status: Type.Optional(UserStatus),
    password: Type.Optional(Password),
    currentPassword: Type.Optional(
      Type.String({ maxLength: PASSWORD_MAX_LENGTH, description: 'Required to change one’s own password' }),
    ),
  },
  { examples: [{ firstName: 'Janet', lastName: 'Doe-Smith', personalTelephone: '+15555550199' }] },
)
export type UpdateUserInput = Static<typeof UpdateUserBody>

export const ListUsersQuery = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Exact e-mail, ignoring case' })),
  ...PageQuery,
})
export type ListUsersQuery = Static<typeof ListUsersQuery>

export const UserParams = Type.Object({ userId: Uuid() })
