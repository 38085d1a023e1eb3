import { type Static, Type } from 'typebox'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../crypto/passwords.js'
import { Body, ShortText, Timestamp, Uuid } from '../../http/schemas.js'

/** The acceptance API behind the page (API.md §4.4). */

export const InvitationSchema = Type.Object({
  tenantId: Uuid(),
  tenantName: Type.String(),
  email: Type.String(),
  roleName: Type.String(),
  expiresAt: Timestamp(),
  needsPassword: Type.Boolean({
    description: 'The user has no password and may use one here: accepting must set one',
  }),
})
export type Invitation = Static<typeof InvitationSchema>

export const AcceptInvitationBody = Body({
  password: Type.Optional(
    Type.String({
      minLength: PASSWORD_MIN_LENGTH,
      maxLength: PASSWORD_MAX_LENGTH,
      errorMessage: `must be ${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters`,
      description: 'Required when needsPassword; ignored otherwise (an existing password is never replaced)',
    }),
  ),
  firstName: Type.Optional(ShortText({ description: 'Set with the first password' })),
  lastName: Type.Optional(ShortText({ description: 'Set with the first password' })),
})
export type AcceptInvitationInput = Static<typeof AcceptInvitationBody>

export const InvitationTokenParams = Type.Object({
  token: Type.String({ description: 'The token from the invitation link' }),
})
