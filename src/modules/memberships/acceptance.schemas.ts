import { type Static, Type } from 'typebox'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../crypto/passwords.js'
import { Body, ShortText, Timestamp, Uuid } from '../../http/schemas.js'

/** The acceptance API behind the page (docs/api.md#tenant-users-and-invitations). */

export const InvitationSchema = Type.Object(
  {
    tenantId: Uuid(),
    tenantName: Type.String(),
    email: Type.String(),
    roleName: Type.String(),
    expiresAt: Timestamp(),
    needsPassword: Type.Boolean({
      description: 'The user has no password and may use one here: accepting must set one',
    }),
  },
  {
    examples: [
      {
        tenantId: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
        tenantName: 'Acme Support',
        email: 'jane.doe@acme.example',
        roleName: 'Agent',
        expiresAt: '2026-11-23T10:15:00Z',
        needsPassword: true,
      },
    ],
  },
)
export type Invitation = Static<typeof InvitationSchema>

export const AcceptInvitationBody = Body(
  {
    password: Type.Optional(
      Type.String({
        minLength: PASSWORD_MIN_LENGTH,
        maxLength: PASSWORD_MAX_LENGTH,
        errorMessage: `must be ${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters`,
        description:
          'Required when needsPassword; ignored otherwise (an existing password is never replaced)',
      }),
    ),
    firstName: Type.Optional(ShortText({ description: 'Set with the first password' })),
    lastName: Type.Optional(ShortText({ description: 'Set with the first password' })),
  },
  { examples: [{ password: 'correct horse battery staple', firstName: 'Jane', lastName: 'Doe' }] },
)
export type AcceptInvitationInput = Static<typeof AcceptInvitationBody>

export const InvitationTokenParams = Type.Object({
  token: Type.String({
    description: 'The token from the invitation link',
    examples: ['kq3V9xZ2bN7mP4rT8wY1cF6hJ0sL5dGa'],
  }),
})
