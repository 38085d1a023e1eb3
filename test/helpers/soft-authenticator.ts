import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'
import { type CBORType, encodeCBOR } from '@levischuck/tiny-cbor'
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server'

/**
 * A software WebAuthn authenticator for tests over HTTP: it builds the bytes a browser and an
 * authenticator would send — clientDataJSON, authenticator data, a "none" attestation, ES256 (P-256)
 * signatures in DER over `authData || SHA-256(clientDataJSON)` — and verifies nothing itself: every check
 * is the service's (@simplewebauthn/server). Each ceremony can be made to misbehave (no user verification,
 * a counter going backwards, another origin or relying party) to perform an attack.
 */

export interface SoftAuthenticatorOptions {
  /** The origin a browser would write in clientDataJSON (the service's public URL's origin). */
  origin: string
  /** The relying party id whose SHA-256 opens the authenticator data (the public URL's host). */
  rpId: string
  /** A synced passkey (BE and BS flags: amr `swk`) rather than a security key (`hwk`). */
  multiDevice?: boolean
}

/** What a single ceremony may do wrong. */
export interface Misbehaviour {
  origin?: string
  rpId?: string
  /** false: the UV flag is not set (the person was not verified, only present). */
  userVerified?: boolean
  /** The signature counter to report instead of the next one. */
  counter?: number
  /** Which of this authenticator's credentials answers (default: the newest allowed). */
  credentialId?: string
  /** The challenge to sign instead of the options' one. */
  challenge?: string
}

interface SoftCredential {
  id: string
  privateKey: KeyObject
  publicKeyCose: Uint8Array
  userHandle: string
  counter: number
}

const FLAG_UP = 0x01
const FLAG_UV = 0x04
const FLAG_BE = 0x08
const FLAG_BS = 0x10
const FLAG_AT = 0x40

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4)
  buffer.writeUInt32BE(value >>> 0)
  return buffer
}

/** The COSE_Key of an EC2 P-256 public key for ES256 (RFC 9053): kty 2, alg -7, crv 1, x, y. */
function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' })
  return encodeCBOR(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x ?? '', 'base64url')],
      [-3, Buffer.from(jwk.y ?? '', 'base64url')],
    ]),
  )
}

export class SoftAuthenticator {
  readonly #credentials: SoftCredential[] = []

  constructor(readonly options: SoftAuthenticatorOptions) {}

  /** The ids (base64url) of the credentials this authenticator holds, oldest first. */
  get credentialIds(): string[] {
    return this.#credentials.map((credential) => credential.id)
  }

  /** navigator.credentials.create(): a new P-256 credential, answered with a "none" attestation. */
  register(
    options: PublicKeyCredentialCreationOptionsJSON,
    wrong: Misbehaviour = {},
  ): RegistrationResponseJSON {
    const excluded = new Set((options.excludeCredentials ?? []).map((credential) => credential.id))
    if (this.credentialIds.some((id) => excluded.has(id)))
      throw new Error('InvalidStateError: this authenticator already holds a credential of the account')
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const rawId = randomBytes(32)
    const credential: SoftCredential = {
      id: b64url(rawId),
      privateKey,
      publicKeyCose: coseKey(publicKey),
      userHandle: options.user.id,
      counter: 0,
    }
    this.#credentials.push(credential)
    const clientDataJSON = this.#clientData('webauthn.create', wrong.challenge ?? options.challenge, wrong)
    const attested = Buffer.concat([
      Buffer.alloc(16),
      Buffer.from([rawId.length >> 8, rawId.length & 0xff]),
      rawId,
      credential.publicKeyCose,
    ])
    const authData = Buffer.concat([
      this.#authDataHead(wrong, FLAG_AT, wrong.counter ?? credential.counter),
      attested,
    ])
    const attestationObject = encodeCBOR(
      new Map<string, CBORType>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, CBORType>()],
        ['authData', new Uint8Array(authData)],
      ]),
    )
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: this.options.multiDevice ? ['hybrid', 'internal'] : ['usb'],
      },
      authenticatorAttachment: this.options.multiDevice ? 'platform' : 'cross-platform',
      clientExtensionResults: {},
    }
  }

  /** navigator.credentials.get(): an assertion by an allowed credential (any, when none is listed). */
  assert(
    options: PublicKeyCredentialRequestOptionsJSON,
    wrong: Misbehaviour = {},
  ): AuthenticationResponseJSON {
    const credential = this.#choose(options, wrong.credentialId)
    if (wrong.counter === undefined) credential.counter += 1
    const counter = wrong.counter ?? credential.counter
    const clientDataJSON = this.#clientData('webauthn.get', wrong.challenge ?? options.challenge, wrong)
    const authData = this.#authDataHead(wrong, 0, counter)
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), {
      key: credential.privateKey,
      dsaEncoding: 'der',
    })
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      authenticatorAttachment: this.options.multiDevice ? 'platform' : 'cross-platform',
      clientExtensionResults: {},
    }
  }

  #choose(options: PublicKeyCredentialRequestOptionsJSON, id: string | undefined): SoftCredential {
    const allowed = new Set((options.allowCredentials ?? []).map((credential) => credential.id))
    const candidates = this.#credentials.filter(
      (credential) =>
        (id === undefined || credential.id === id) && (allowed.size === 0 || allowed.has(credential.id)),
    )
    const credential = candidates.at(-1)
    if (!credential) throw new Error('NotAllowedError: no credential of this authenticator is allowed')
    return credential
  }

  #clientData(type: string, challenge: string, wrong: Misbehaviour): Buffer {
    const origin = wrong.origin ?? this.options.origin
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }))
  }

  /** rpIdHash, flags (UP, UV unless told otherwise, BE|BS for a synced passkey, plus `extra`), counter. */
  #authDataHead(wrong: Misbehaviour, extra: number, counter: number): Buffer {
    let flags = FLAG_UP | extra
    if (wrong.userVerified !== false) flags |= FLAG_UV
    if (this.options.multiDevice) flags |= FLAG_BE | FLAG_BS
    return Buffer.concat([sha256(wrong.rpId ?? this.options.rpId), Buffer.from([flags]), u32(counter)])
  }
}

/** The service a ceremony talks to: `request` of test-app.ts (kept structural: this file builds bytes). */
interface Requester {
  request(
    method: string,
    url: string,
    options?: { token?: string; body?: unknown },
  ): Promise<{ status: number; body: any }>
}

/** An authenticator for the test app's relying party (TENANTRY_PUBLIC_URL http://tenantry.test). */
export function authenticatorFor(publicUrl: string, multiDevice = false): SoftAuthenticator {
  const url = new URL(publicUrl)
  return new SoftAuthenticator({ origin: url.origin, rpId: url.hostname, multiDevice })
}

/** Enrols a passkey of `authenticator` for the bearer of `token` over HTTP; the 201's factor. */
export async function enrolPasskeyOverHttp(
  t: Requester,
  token: string,
  authenticator: SoftAuthenticator,
  name?: string,
): Promise<{ id: string; name: string }> {
  const options = await t.request('POST', '/v1/me/factors/webauthn/options', { token })
  if (options.status !== 200) throw new Error(`passkey options: ${JSON.stringify(options.body)}`)
  const response = authenticator.register(options.body.result)
  const enrolled = await t.request('POST', '/v1/me/factors/webauthn', {
    token,
    body: { response, ...(name ? { name } : {}) },
  })
  if (enrolled.status !== 201) throw new Error(`passkey enrolment: ${JSON.stringify(enrolled.body)}`)
  return enrolled.body.result
}
