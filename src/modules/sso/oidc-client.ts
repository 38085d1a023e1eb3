import * as client from 'openid-client'
import type { OutboundFetch, OutboundPolicy } from '../../http/outbound.js'

/**
 * The OpenID Connect relying party, through openid-client (discovery, authorization code with PKCE, and
 * every ID token check: signature, issuer, audience, expiry, nonce). Every request it makes goes through
 * the outbound fetch, so the issuer and every endpoint its discovery document names obey the outbound
 * rule at connect time (docs/webhooks.md#the-outbound-rule).
 */
export interface OidcSettings {
  issuer: string
  clientId: string
  clientSecret: string
}

export async function discoverOidc(
  settings: OidcSettings,
  fetch: OutboundFetch,
  policy: OutboundPolicy,
): Promise<client.Configuration> {
  const customFetch = ((url: string, options: client.CustomFetchOptions) =>
    fetch(url, {
      method: options.method,
      headers: options.headers,
      body: options.body as never,
      signal: options.signal ?? null,
      redirect: 'manual',
    })) as client.CustomFetch
  return client.discovery(
    new URL(settings.issuer),
    settings.clientId,
    undefined,
    client.ClientSecretBasic(settings.clientSecret),
    {
      [client.customFetch]: customFetch,
      // Plain http only where the operator relaxed the outbound rule (tests, closed networks).
      ...(policy.allowHttp ? { execute: [client.allowInsecureRequests] } : {}),
      timeout: 10,
    },
  )
}

export interface OidcStart {
  url: URL
  state: string
  nonce: string
  codeVerifier: string
}

export async function oidcAuthorizationUrl(
  config: client.Configuration,
  redirectUri: string,
): Promise<OidcStart> {
  const codeVerifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  })
  return { url, state, nonce, codeVerifier }
}

/** The ID token's claims after openid-client has checked the code exchange and the token. */
export async function oidcFinish(
  config: client.Configuration,
  callbackUrl: URL,
  expected: { state: string; nonce: string; codeVerifier: string },
  emailClaim: string,
): Promise<Record<string, unknown>> {
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: expected.codeVerifier,
    expectedState: expected.state,
    expectedNonce: expected.nonce,
    idTokenExpected: true,
  })
  const claims = tokens.claims()
  if (!claims) throw new Error('the provider returned no ID token')
  if (claims[emailClaim] !== undefined) return claims as Record<string, unknown>
  // Many providers put scope claims (email) in the UserInfo answer rather than in the ID token;
  // openid-client checks that it belongs to the ID token's subject.
  const userInfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
  return { ...userInfo, ...claims, [emailClaim]: userInfo[emailClaim] } as Record<string, unknown>
}
