import { describe, expect, it } from 'vitest'
import {
  amrOf,
  challengeTokenOf,
  creationOptions,
  encodeChallenge,
  relyingParty,
  requestOptions,
  type StoredCredential,
  verifyAssertion,
  verifyRegistration,
} from '../../../src/modules/mfa/webauthn.js'
import { SoftAuthenticator } from '../../helpers/soft-authenticator.js'

/**
 * The WebAuthn wrapper (docs/security.md, "Passkeys") against real bytes from a software authenticator:
 * what it accepts, and each ceremony it refuses — every refusal is the library's check, switched on here.
 */
const rp = relyingParty({ publicUrl: 'https://tenantry.test:8443' })
const user = { id: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f', email: 'ana@example.com', displayName: 'Ana' }

async function enrolled(multiDevice = false) {
  const authenticator = new SoftAuthenticator({ origin: rp.origin, rpId: rp.id, multiDevice })
  const options = await creationOptions(rp, user, [], 'registration-challenge')
  const credential = await verifyRegistration(rp, authenticator.register(options), options.challenge)
  if (!credential) throw new Error('the soft authenticator’s registration was refused')
  return { authenticator, credential: credential as StoredCredential & { deviceType: string } }
}

describe('WebAuthn wrapper', () => {
  it('takes the relying party from the public URL: its host as id, its origin, never a path', () => {
    expect(relyingParty({ publicUrl: 'https://id.example.com:8443/base' })).toEqual({
      id: 'id.example.com',
      origin: 'https://id.example.com:8443',
      name: 'Tenantry',
    })
  })

  it('asks for user verification and a discoverable credential, and excludes the passkeys held', async () => {
    const { credential } = await enrolled()
    const options = await creationOptions(rp, user, [credential], 'c1')
    expect(options.authenticatorSelection).toMatchObject({
      residentKey: 'preferred',
      userVerification: 'required',
    })
    expect(options.rp).toEqual({ id: 'tenantry.test', name: 'Tenantry' })
    expect(options.excludeCredentials?.map((c) => c.id)).toEqual([credential.credentialId])
    expect(options.user.name).toBe(user.email)
    expect(Buffer.from(options.user.id, 'base64url').toString('hex')).toBe(user.id.replaceAll('-', ''))
    const request = await requestOptions(rp, [], 'c2')
    expect(request.userVerification).toBe('required')
    expect(request.allowCredentials).toEqual([])
    expect(challengeTokenOf({ response: { clientDataJSON: 'not json' } })).toBeUndefined()
    expect(request.challenge).toBe(encodeChallenge('c2'))
  })

  it('registers a security key (hwk) and a synced passkey (swk), and accepts their assertions', async () => {
    for (const multiDevice of [false, true]) {
      const { authenticator, credential } = await enrolled(multiDevice)
      expect(amrOf(credential.deviceType)).toBe(multiDevice ? 'swk' : 'hwk')
      const options = await requestOptions(rp, [credential], 'login-challenge')
      const check = await verifyAssertion(rp, authenticator.assert(options), options.challenge, credential)
      expect(check).toEqual({
        ok: true,
        assertion: { signCount: 1, deviceType: multiDevice ? 'multiDevice' : 'singleDevice' },
      })
    }
  })

  it('refuses a registration without user verification, from another origin or for another relying party', async () => {
    for (const wrong of [{ userVerified: false }, { origin: 'https://evil.test' }, { rpId: 'evil.test' }]) {
      const authenticator = new SoftAuthenticator({ origin: rp.origin, rpId: rp.id })
      const options = await creationOptions(rp, user, [], 'c')
      expect(
        await verifyRegistration(rp, authenticator.register(options, wrong), options.challenge),
      ).toBeUndefined()
    }
  })

  it('refuses an assertion without user verification, from another origin, for another relying party, or for another challenge', async () => {
    const { authenticator, credential } = await enrolled()
    const options = await requestOptions(rp, [credential], 'the-challenge')
    for (const wrong of [
      { userVerified: false },
      { origin: 'https://evil.test' },
      { rpId: 'evil.test' },
      { challenge: Buffer.from('another').toString('base64url') },
    ]) {
      const check = await verifyAssertion(
        rp,
        authenticator.assert(options, wrong),
        options.challenge,
        credential,
      )
      expect(check).toEqual({ ok: false, counterRegressed: false })
    }
  })

  it('reports a signed counter that does not grow as a regression, a counter of 0 from a synced passkey as fine', async () => {
    const { authenticator, credential } = await enrolled()
    const options = await requestOptions(rp, [credential], 'c')
    const c = options.challenge
    const stored = { ...credential, signCount: 5 }
    expect(await verifyAssertion(rp, authenticator.assert(options, { counter: 5 }), c, stored)).toEqual({
      ok: false,
      counterRegressed: true,
      signCount: 5,
    })
    expect(await verifyAssertion(rp, authenticator.assert(options, { counter: 0 }), c, stored)).toMatchObject(
      {
        counterRegressed: true,
      },
    )
    expect(await verifyAssertion(rp, authenticator.assert(options, { counter: 6 }), c, stored)).toMatchObject(
      {
        ok: true,
      },
    )
    const zero = { ...credential, signCount: 0 }
    expect(await verifyAssertion(rp, authenticator.assert(options, { counter: 0 }), c, zero)).toMatchObject({
      ok: true,
    })
  })
})
