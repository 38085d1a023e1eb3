import { type Static, Type } from 'typebox'
import { Body, Name, Nullable, Timestamp, Uuid } from '../../http/schemas.js'

/** Second factors' shapes (docs/api.md, "Second factors"; docs/security.md). */

/** A TOTP code as an app shows it: six digits (spaces between groups are dropped). */
const Code = Type.String({
  minLength: 6,
  maxLength: 12,
  pattern: '^[0-9 ]+$',
  errorMessage: 'must be the six digits the authenticator app shows',
  description: 'The six digits the authenticator app shows',
})

const RecoveryCode = Type.String({
  minLength: 10,
  maxLength: 32,
  pattern: '^[A-Za-z2-7 -]+$',
  errorMessage: 'must be a recovery code: 10 characters A–Z and 2–7, spaces and hyphens allowed',
  description: 'One of the recovery codes, with or without its hyphen, in any case',
})

/** An AuthenticationResponseJSON (what @simplewebauthn/browser's startAuthentication resolves to). */
export const WebAuthnAssertion = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1024 }),
    type: Type.Literal('public-key'),
    response: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: true, description: 'A WebAuthn assertion (AuthenticationResponseJSON)' },
)

const answerFields = {
  code: Type.Optional(Code),
  recoveryCode: Type.Optional(RecoveryCode),
  webauthn: Type.Optional(WebAuthnAssertion),
}

export const MfaTokenBody = Body(
  {
    mfaToken: Type.String({
      minLength: 20,
      maxLength: 200,
      pattern: '^[A-Za-z0-9_-]+$',
      errorMessage: 'must be the token of an mfa_required challenge',
      description: 'The `error.mfa.token` of the 401 mfa_required that POST /v1/tokens answered',
    }),
    ...answerFields,
  },
  { examples: [{ mfaToken: 'q0Hc3rXh0bVwS1v9Jm3N2pYp1w4U7bS0kq8yX6dWm2E', code: '123456' }] },
)
export type MfaTokenRequest = Static<typeof MfaTokenBody>

export const StepUpBody = Body(
  {
    mfaToken: Type.Optional(
      Type.String({
        minLength: 20,
        maxLength: 200,
        pattern: '^[A-Za-z0-9_-]+$',
        errorMessage: 'must be the token of a reauthentication_required challenge',
        description: 'The `error.mfa.token` of the 401 reauthentication_required; required with `webauthn`',
      }),
    ),
    ...answerFields,
  },
  { examples: [{ code: '123456' }] },
)
export type StepUpRequestBody = Static<typeof StepUpBody>

export const FactorSchema = Type.Object({
  id: Type.String({ description: 'The factor’s id; `recovery` for the recovery codes' }),
  type: Type.Union([Type.Literal('totp'), Type.Literal('webauthn'), Type.Literal('recovery')]),
  name: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('active')], {
    description:
      'pending: a TOTP key not confirmed with a code yet (it counts for nothing, gone after 10 minutes)',
  }),
  created: Timestamp(),
  lastUsed: Nullable(Timestamp()),
  remaining: Type.Optional(Type.Integer({ description: 'Recovery codes only: how many are left unused' })),
})
export type Factor = Static<typeof FactorSchema>

export const TotpEnrolmentBody = Body(
  { name: Type.Optional(Name({ description: 'What the person calls it; default "Authenticator app"' })) },
  { examples: [{ name: 'Phone' }] },
)

export const TotpEnrolmentSchema = Type.Object({
  id: Uuid(),
  status: Type.Literal('pending'),
  secret: Type.String({ description: 'The key in base32, to type into an app: shown this once' }),
  otpauthUri: Type.String({ description: 'otpauth://totp/… for an app to take' }),
  qrSvg: Type.String({ description: 'The URI as a QR code, an SVG document' }),
})
export type TotpEnrolment = Static<typeof TotpEnrolmentSchema>

export const VerifyFactorBody = Body({ code: Code }, { examples: [{ code: '123456' }] })

export const FactorParams = Type.Object({
  factorId: Type.Union([Uuid(), Type.Literal('recovery')], {
    errorMessage: 'must be a factor id (a UUID) or "recovery"',
  }),
})
export const PendingFactorParams = Type.Object({ factorId: Uuid() })

export const RecoveryCodesSchema = Type.Object({
  codes: Type.Array(Type.String(), {
    description: 'Ten codes, each usable once: shown this once, kept only as keyed hashes',
  }),
})
