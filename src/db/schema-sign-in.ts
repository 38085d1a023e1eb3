import type { ColumnType, Generated } from 'kysely'
import type { SsoTestStatus } from './closed-lists.js'
import type { Defaulted, Json, Timestamp } from './column-types.js'

/**
 * The tables of signing in and of account assurance (docs/security.md, docs/sso.md): identity providers and
 * their sign-ins, console sessions, the sessions behind user tokens, second factors, recovery codes and
 * second-factor challenges. Part of the Database of
 * db/schema.ts; columns mirror migrations/ exactly.
 */

/**
 * How a sign-in was won, as a token's `amr` says it (docs/security.md): a password, a one-time code, a
 * hardware or software key (passkeys), a tenant's single sign-on, a recovery code.
 */
export const AUTH_METHODS = ['pwd', 'otp', 'hwk', 'swk', 'sso', 'rec'] as const
export type AuthMethod = (typeof AUTH_METHODS)[number]
/** A second factor's kind and state, and what a second-factor challenge is for (migration 0019 domains). */
export const FACTOR_TYPES = ['totp', 'webauthn'] as const
export const FACTOR_STATUSES = ['pending', 'active'] as const
export const MFA_CHALLENGE_PURPOSES = [
  'sign_in',
  'step_up',
  'passkey_sign_in',
  'webauthn_registration',
] as const

/** A console session (migration 0014): the platform token sealed with the secret key, found by id hash. */
export interface ConsoleSessionsTable {
  id_hash: string
  user_id: string
  /** A SecretEnvelope (crypto/secrets.ts); never plaintext. */
  token: Json<Record<string, unknown>>
  created: Timestamp
  expires: Timestamp
  /** The person as `POST /v1/login` last answered for this session, and when (migration 0018). */
  login: ColumnType<Record<string, unknown> | null, string | null, string | null>
  login_read: ColumnType<Date | null, Date | null, Date | null>
}

/** A sign-in and the tokens issued for it (migration 0017). */
export interface UserSessionsTable {
  id: string
  user_id: string
  created: Timestamp
  last_seen: Timestamp
  ip: string | null
  user_agent: string | null
  auth_methods: AuthMethod[]
  /** Null while the session is live; set only to the database's clock, `statement_timestamp()` (0017). */
  revoked_at: ColumnType<Date | null, never, Date>
  expires_at: Timestamp
}

/** A person's second factor (migration 0019): an authenticator app (TOTP) or a passkey. */
export interface UserFactorsTable {
  id: string
  user_id: string
  type: (typeof FACTOR_TYPES)[number]
  name: string
  status: (typeof FACTOR_STATUSES)[number]
  created: Timestamp
  last_used: ColumnType<Date | null, Date | null | undefined, Date | null>
  /** A SecretEnvelope (crypto/secrets.ts) of the base32 key; never plaintext. */
  totp_secret: Json<Record<string, unknown>> | null
  /** The last TOTP time step accepted: a code is taken once (RFC 6238 section 5.2). */
  totp_last_step: ColumnType<string | null, number | null | undefined, number | null>
  /** base64url of the WebAuthn credential id. */
  credential_id: string | null
  /** The credential's COSE public key. */
  public_key: Uint8Array | null
  sign_count: ColumnType<string | null, number | null | undefined, number | null>
  transports: string[] | null
  /** WebAuthn's credentialDeviceType: 'singleDevice' (a security key, amr hwk) or 'multiDevice' (swk). */
  device_type: string | null
}

/** Recovery codes (migration 0019): keyed hashes, each spent once. */
export interface RecoveryCodesTable {
  user_id: string
  code_hash: string
  created: Timestamp
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

/** A second-factor challenge (migration 0019): single use, one account and purpose, five minutes. */
export interface MfaChallengesTable {
  id: string
  token_hash: string
  user_id: string | null
  purpose: (typeof MFA_CHALLENGE_PURPOSES)[number]
  session_id: string | null
  webauthn_challenge: string | null
  /** The token lifetime the sign-in asked for, given to the token the answer earns. */
  token_ttl: number | null
  attempts: Generated<number>
  created: Timestamp
  expires_at: Timestamp
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

export interface IdentityProvidersTable {
  id: string
  tenant_id: string
  name: string
  description: Defaulted<string>
  active: boolean
  protocol: 'saml' | 'oidc'
  email_mapping: string
  metadata_url: string | null
  metadata_xml: string | null
  issuer: string | null
  client_id: string | null
  /** A SecretEnvelope (crypto/secrets.ts); never plaintext. */
  client_secret: Json<Record<string, unknown>> | null
  created: Timestamp
  created_by: string
  updated: Timestamp
  updated_by: string
}

export interface SsoRequestsTable {
  id: string
  provider_id: string
  kind: 'saml' | 'oidc'
  code_verifier: string | null
  nonce: string | null
  return_to: string | null
  created: Timestamp
  expires: Timestamp
  /** Set when the login is a test sign-in (sso_tests): its answer is reported, never used. */
  test_id: Defaulted<string | null>
}

/** A test sign-in of an identity provider and what the provider asserted (docs/sso.md#5-test-a-provider-before-people-depend-on-it). */
export interface SsoTestsTable {
  tenant_id: string
  provider_id: string
  id: string
  status: SsoTestStatus
  email: string | null
  name_id: string | null
  attributes: Json<Record<string, unknown>> | null
  error: string | null
  /** Whether a real sign-in with that e-mail would find an accepted membership in the tenant. */
  member_found: boolean | null
  created: Timestamp
  created_by: string
  started: Timestamp | null
  completed: Timestamp | null
  expires: Timestamp
}

export interface SsoUsedAssertionsTable {
  provider_id: string
  assertion_id: string
  expires: Timestamp
}
