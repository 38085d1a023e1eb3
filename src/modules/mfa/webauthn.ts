import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { Config } from '../../config.js'

/**
 * WebAuthn over @simplewebauthn/server (docs/security.md, "Passkeys"): the options a browser passes to
 * navigator.credentials.create() / .get(), and the checks of what it answers. The relying party is the
 * service as people reach it: its id is the host of TENANTRY_PUBLIC_URL (a domain name — browsers refuse
 * an IP address), its origin that URL's origin. Every ceremony requires user verification (a PIN or a
 * biometric on the authenticator): a passkey alone then proves two factors.
 *
 * This file builds and checks; the challenges' storage (single use, one account and purpose, five
 * minutes) and the credentials' are the callers'.
 */

export const RP_NAME = 'Tenantry'
/** How long a browser's prompt may stay open; the challenge itself lives five minutes. */
const CEREMONY_TIMEOUT_MS = 300_000

export interface RelyingParty {
  id: string
  origin: string
  name: string
}

export function relyingParty(config: Pick<Config, 'publicUrl'>): RelyingParty {
  const url = new URL(config.publicUrl)
  return { id: url.hostname, origin: url.origin, name: RP_NAME }
}

/** A passkey as stored (user_factors): what an assertion is checked against. */
export interface StoredCredential {
  credentialId: string
  publicKey: Uint8Array
  signCount: number
  transports: string[]
}

/** A credential a registration proved, ready to be stored. */
export interface NewCredential extends StoredCredential {
  deviceType: 'singleDevice' | 'multiDevice'
}

/** How a passkey sign-in is named in a token's `amr`: a security key `hwk`, a synced passkey `swk`. */
export function amrOf(deviceType: string | null): 'hwk' | 'swk' {
  return deviceType === 'multiDevice' ? 'swk' : 'hwk'
}

/**
 * The challenge a response answers, as the service chose it: the options carry the UTF-8 bytes of a
 * challenge token (challenges.ts) in base64url, and clientDataJSON echoes them. So a client sends back
 * only the response, and the token it names is looked up by its hash. undefined when unreadable.
 */
export function challengeTokenOf(response: unknown): string | undefined {
  const clientDataJSON = (response as { response?: { clientDataJSON?: unknown } } | null)?.response
    ?.clientDataJSON
  if (typeof clientDataJSON !== 'string') return undefined
  try {
    const clientData = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    if (typeof clientData?.challenge !== 'string') return undefined
    return Buffer.from(clientData.challenge, 'base64url').toString('utf8')
  } catch {
    return undefined
  }
}

/** A challenge token as the options carry it (base64url of its UTF-8 bytes): what a response must echo. */
export function encodeChallenge(token: string): string {
  return Buffer.from(token, 'utf8').toString('base64url')
}

/** The user handle of an account: its id's 16 bytes, never its e-mail (WebAuthn: no personal data). */
function userHandleBytes(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId.replaceAll('-', ''), 'hex'))
}

/**
 * Whether an assertion's user handle, when it carries one (a discoverable passkey does), is the account's
 * the credential belongs to (WebAuthn §7.2 step 6).
 */
export function userHandleMatches(response: AuthenticationResponseJSON, userId: string): boolean {
  const handle = response.response.userHandle
  return handle === undefined || handle === Buffer.from(userHandleBytes(userId)).toString('base64url')
}

/**
 * Creation options for `user`, its passkeys excluded (one authenticator is enrolled once); `challenge` is
 * a challenge token, carried as encodeChallenge(challenge).
 */
export async function creationOptions(
  rp: RelyingParty,
  user: { id: string; email: string; displayName: string },
  existing: readonly StoredCredential[],
  challenge: string,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.displayName,
    userID: userHandleBytes(user.id),
    challenge,
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((credential) => ({
      id: credential.credentialId,
      transports: credential.transports,
    })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
  })
}

/**
 * Request options: the listed passkeys, or any discoverable one of this relying party when none;
 * `challenge` as for creationOptions.
 */
export async function requestOptions(
  rp: RelyingParty,
  allowed: readonly StoredCredential[],
  challenge: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    challenge,
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: 'required',
    allowCredentials: allowed.map((credential) => ({
      id: credential.credentialId,
      transports: credential.transports,
    })),
  })
}

/**
 * What every answer of a passkey, at enrolment and at sign-in, is checked against: the challenge the
 * options carried (base64url), this relying party's origin and id, and user verification.
 */
function expectationsOf(rp: RelyingParty, expectedChallenge: string) {
  return { expectedChallenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: true }
}

/**
 * A registration response checked against the options' challenge (`expectedChallenge`, base64url as the
 * options carry it): origin, relying party, user presence and verification, attestation. undefined when
 * anything is wrong, or when the response is not one at all.
 */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  expectedChallenge: string,
): Promise<NewCredential | undefined> {
  try {
    const result = await verifyRegistrationResponse({ response, ...expectationsOf(rp, expectedChallenge) })
    if (!result.verified) return undefined
    const { credential, credentialDeviceType } = result.registrationInfo
    return {
      credentialId: credential.id,
      publicKey: credential.publicKey,
      signCount: credential.counter,
      transports: credential.transports ?? response.response.transports ?? [],
      deviceType: credentialDeviceType,
    }
  } catch {
    return undefined
  }
}

/** What an assertion proved: the new counter and the kind of passkey. */
export interface VerifiedAssertion {
  signCount: number
  deviceType: 'singleDevice' | 'multiDevice'
}

export type AssertionCheck =
  | { ok: true; assertion: VerifiedAssertion }
  | { ok: false; counterRegressed: false }
  | { ok: false; counterRegressed: true; signCount: number }

/**
 * An assertion checked against the options' challenge (base64url) and the stored passkey: origin, relying
 * party, user verification, signature — and the signature counter, which must grow whenever either the
 * stored or the new one is non-zero (WebAuthn §6.1.1). The library is given a counter of 0 so that it
 * judges the signature first: a regression is reported only for an assertion the passkey really signed —
 * a sign of a cloned authenticator, worth an audit event — never for bytes anyone could forge.
 */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  expectedChallenge: string,
  stored: StoredCredential,
): Promise<AssertionCheck> {
  let info: { newCounter: number; credentialDeviceType: 'singleDevice' | 'multiDevice' }
  try {
    const result = await verifyAuthenticationResponse({
      response,
      ...expectationsOf(rp, expectedChallenge),
      credential: { id: stored.credentialId, publicKey: new Uint8Array(stored.publicKey), counter: 0 },
    })
    if (!result.verified) return { ok: false, counterRegressed: false }
    info = result.authenticationInfo
  } catch {
    return { ok: false, counterRegressed: false }
  }
  const regressed = (info.newCounter > 0 || stored.signCount > 0) && info.newCounter <= stored.signCount
  if (regressed) return { ok: false, counterRegressed: true, signCount: info.newCounter }
  return { ok: true, assertion: { signCount: info.newCounter, deviceType: info.credentialDeviceType } }
}
