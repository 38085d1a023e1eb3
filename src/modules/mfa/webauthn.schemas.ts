import { Type } from 'typebox'
import { Body, Name } from '../../http/schemas.js'
import { TOKEN_TTL } from '../auth/auth.schemas.js'

/**
 * WebAuthn in the API (docs/security.md, "Passkeys"): the options handed to the browser and the responses
 * it sends back, in the JSON form of @simplewebauthn/browser (startRegistration / startAuthentication).
 * Binary values travel as base64url. A response's fields are checked here for shape only — what they
 * prove is the library's to judge (webauthn.ts).
 */

const BASE64URL = '^[A-Za-z0-9_-]*={0,2}$'
/** Patterns run on at most 4,096 characters (http/validation.ts); a longer value is left to the library. */
const PATTERNED_MAX = 4096
const b64 = (maxLength: number, description: string) =>
  Type.String({
    minLength: 1,
    maxLength,
    ...(maxLength <= PATTERNED_MAX ? { pattern: BASE64URL, errorMessage: 'must be base64url' } : {}),
    description,
  })

/** Base64url characters of the largest signature a passkey makes (ML-DSA-87: 4,627 bytes). */
export const SIGNATURE_MAX = 6_170

/** A credential id: at most 1,023 bytes (WebAuthn §5.8.3), 1,364 characters of base64url. */
const CredentialId = b64(1364, 'The credential id (base64url)')
const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })
const CredentialType = Type.Literal('public-key')
const Attachment = Type.Optional(Type.String({ maxLength: 32 }))
const Extensions = Type.Optional(Type.Record(Type.String(), Type.Unknown()))

/** A registration response (RegistrationResponseJSON). */
export const RegistrationResponseSchema = Type.Object(
  {
    id: CredentialId,
    rawId: CredentialId,
    type: CredentialType,
    response: Type.Object({
      clientDataJSON: b64(4096, 'clientDataJSON'),
      attestationObject: b64(65_536, 'The attestation object (CBOR)'),
      transports: Type.Optional(Transports),
    }),
    authenticatorAttachment: Attachment,
    clientExtensionResults: Extensions,
  },
  {
    description:
      'What navigator.credentials.create() answered, as @simplewebauthn/browser startRegistration returns it',
  },
)

/** An assertion (AuthenticationResponseJSON). */
export const AuthenticationResponseSchema = Type.Object(
  {
    id: CredentialId,
    rawId: CredentialId,
    type: CredentialType,
    response: Type.Object({
      clientDataJSON: b64(4096, 'clientDataJSON'),
      authenticatorData: b64(4096, 'The authenticator data'),
      // The signature of a post-quantum passkey is large: @simplewebauthn/server offers ML-DSA-44 first
      // (2,420 bytes signed; Chromium's own passkeys use it), and ML-DSA-87 signs 4,627 bytes — 6,170
      // characters of base64url. ES256 and RS256 sign at most 512 bytes.
      signature: b64(SIGNATURE_MAX, 'The signature'),
      userHandle: Type.Optional(Type.String({ maxLength: 128, pattern: BASE64URL })),
    }),
    authenticatorAttachment: Attachment,
    clientExtensionResults: Extensions,
  },
  {
    description:
      'What navigator.credentials.get() answered, as @simplewebauthn/browser startAuthentication returns it',
  },
)

const Descriptor = Type.Object({
  id: Type.String(),
  type: Type.String({ description: '"public-key"' }),
  transports: Type.Optional(Transports),
})

/** PublicKeyCredentialCreationOptionsJSON, for navigator.credentials.create() (every field is always set). */
export const CreationOptionsSchema = Type.Object(
  {
    challenge: Type.String({
      description: 'Single use, 5 minutes, bound to the caller and to enrolment; the response echoes it',
    }),
    rp: Type.Object({
      id: Type.Optional(Type.String({ description: 'The host of the service’s public URL' })),
      name: Type.String(),
    }),
    user: Type.Object({
      id: Type.String({ description: 'The user handle: the account id’s 16 bytes, base64url' }),
      name: Type.String(),
      displayName: Type.String(),
    }),
    pubKeyCredParams: Type.Array(Type.Object({ alg: Type.Integer(), type: Type.String() })),
    timeout: Type.Optional(Type.Integer()),
    attestation: Type.Optional(Type.String()),
    excludeCredentials: Type.Optional(
      Type.Array(Descriptor, { description: 'The caller’s passkeys: each enrolled once' }),
    ),
    authenticatorSelection: Type.Optional(
      Type.Object({
        residentKey: Type.Optional(Type.String()),
        requireResidentKey: Type.Optional(Type.Boolean()),
        userVerification: Type.Optional(Type.String()),
        authenticatorAttachment: Type.Optional(Type.String()),
      }),
    ),
  },
  {
    description:
      'WebAuthn creation options (JSON form): hand them to @simplewebauthn/browser startRegistration',
  },
)

/** PublicKeyCredentialRequestOptionsJSON, for navigator.credentials.get() (every field is always set). */
export const RequestOptionsSchema = Type.Object(
  {
    challenge: Type.String({ description: 'Single use, 5 minutes; the assertion echoes it' }),
    rpId: Type.Optional(Type.String()),
    timeout: Type.Optional(Type.Integer()),
    userVerification: Type.Optional(Type.String()),
    allowCredentials: Type.Optional(
      Type.Array(Descriptor, {
        description: 'Always empty for a passkey sign-in: any discoverable passkey of this service answers',
      }),
    ),
  },
  {
    description:
      'WebAuthn request options (JSON form): hand them to @simplewebauthn/browser startAuthentication',
  },
)

/** A registration as startRegistration returns it, shortened: examples for the document. */
const REGISTRATION_EXAMPLE = {
  id: 'pF3y2mQ0rN8cW1xV7tK4bJ6hE9aL5sD0uG2iO8yT3wQ',
  rawId: 'pF3y2mQ0rN8cW1xV7tK4bJ6hE9aL5sD0uG2iO8yT3wQ',
  type: 'public-key' as const,
  response: {
    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiZEdWemRBIn0',
    attestationObject: 'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjF',
    transports: ['internal', 'hybrid'],
  },
  authenticatorAttachment: 'platform',
  clientExtensionResults: {},
}

export const PasskeyEnrolmentBody = Body(
  {
    name: Type.Optional(Name({ description: 'What the person calls this passkey; default "Passkey"' })),
    response: RegistrationResponseSchema,
  },
  { examples: [{ name: 'Work laptop', response: REGISTRATION_EXAMPLE }] },
)

export const PasskeyOptionsBody = Body(
  {
    username: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 254,
        description:
          'Accepted and ignored: the options never depend on it, so they say nothing of who has an account',
      }),
    ),
  },
  { examples: [{}, { username: 'jane.doe@example.com' }] },
)

export const PasskeySignInBody = Body(
  {
    response: AuthenticationResponseSchema,
    ttl: Type.Optional(
      Type.Integer({
        minimum: TOKEN_TTL.min,
        maximum: TOKEN_TTL.max,
        description: `Lifetime in seconds; default ${TOKEN_TTL.default}, at most 7 days`,
      }),
    ),
  },
  {
    examples: [
      {
        response: {
          id: 'pF3y2mQ0rN8cW1xV7tK4bJ6hE9aL5sD0uG2iO8yT3wQ',
          rawId: 'pF3y2mQ0rN8cW1xV7tK4bJ6hE9aL5sD0uG2iO8yT3wQ',
          type: 'public-key',
          response: {
            clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiZEdWemRBIn0',
            authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ',
            signature: 'MEUCIQDh7wPz1vK3o1Yk0m5gJvQm3sV2bS8vHqz1c4x0aY2bAiB',
            userHandle: 'AZOm8SxOfRCaVWsfPC1OXw',
          },
          authenticatorAttachment: 'platform',
          clientExtensionResults: {},
        },
        ttl: 3600,
      },
    ],
  },
)
