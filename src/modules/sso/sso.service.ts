import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import type { IdentityProviderRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { recordAudit } from '../audit/audit.repository.js'
import { oidcAssertedMfa, samlAssertedMfa } from './asserted-mfa.js'
import { findIdentityProvider } from './identity-providers.repository.js'
import { identityProviderNotFound } from './identity-providers.service.js'
import { oidcAuthorizationUrl, oidcFinish } from './oidc-client.js'
import { parseIdpMetadata } from './saml-metadata.js'
import { SAML_REQUEST_TTL_MS, serviceProvider, verifiedAssertion } from './saml-sp.js'
import { findSignInMember, insertSsoRequest, rememberAssertion, takeSsoRequest } from './sso.repository.js'
import { oidcConfig, samlRequests } from './sso-requests.js'
import { checkReturnTo, checkTestReturnTo } from './sso-return.js'
import { serviceProviderUrls } from './sso-urls.js'

/**
 * The sign-in flows of docs/sso.md §4: start at the IdP, come back with a signed answer, and — for an e-mail
 * whose user has an accepted membership in the provider's tenant — hand a platform token over. Nothing
 * is created or joined on the way: an unknown e-mail is refused.
 */

/** A person the IdP vouched for, ready for a token that says which tenant's SSO it came from. */
export interface SsoSignIn {
  userId: string
  tenantId: string
  providerId: string
  /** Where the front end receives the token (checked against TENANTRY_SSO_RETURN_URL's origin). */
  returnTo: string
  /** The provider asserted more than one factor (asserted-mfa.ts): its token says so (`idp_mfa`). */
  mfa: boolean
}

function refused(message: string): AppError {
  return new AppError('unauthorized', `Single sign-on refused: ${message}`)
}

/** An active provider of an active tenant, by id alone (the browser routes carry nothing else). */
export async function usableProvider(ctx: ServiceContext, providerId: string): Promise<IdentityProviderRow> {
  const provider = await findIdentityProvider(ctx.db, providerId)
  if (!provider?.active) throw identityProviderNotFound()
  const tenant = await ctx.access.tenantPlacement(provider.tenant_id)
  if (!tenant?.active) throw identityProviderNotFound()
  return provider
}

/**
 * Where the browser goes to sign in: the IdP, with a request this service will recognise once. A test
 * sign-in (`test`: its provider, active or not, and the test's id) marks the request as the test's; its
 * `returnTo` is where the browser goes after the report (sso-return.ts), not a token's destination.
 */
export async function startSignIn(
  ctx: ServiceContext,
  providerId: string,
  returnTo?: string,
  test?: { provider: IdentityProviderRow; testId: string },
): Promise<string> {
  const provider = test?.provider ?? (await usableProvider(ctx, providerId))
  const testId = test?.testId
  const target = test ? checkTestReturnTo(ctx, returnTo) : checkReturnTo(ctx, returnTo)
  const urls = serviceProviderUrls(ctx.config, provider.id)
  if (provider.protocol === 'saml') {
    const idp = await parseIdpMetadata(provider.metadata_xml ?? '')
    const { cache } = samlRequests(ctx, provider.id, target, testId)
    return serviceProvider(urls, idp, cache).getAuthorizeUrlAsync('', undefined, {})
  }
  const config = await oidcConfig(ctx, provider)
  const start = await oidcAuthorizationUrl(config, urls.redirectUri)
  const now = ctx.clock.now()
  await insertSsoRequest(ctx.db, {
    id: start.state,
    providerId: provider.id,
    kind: 'oidc',
    codeVerifier: start.codeVerifier,
    nonce: start.nonce,
    returnTo: target,
    created: now,
    expires: new Date(now.getTime() + SAML_REQUEST_TTL_MS),
    ...(testId ? { testId } : {}),
  })
  return start.url.href
}

/** The e-mail the IdP asserted, under the provider's mapping. */
export function assertedEmail(
  mapping: string,
  values: Record<string, unknown>,
  nameId?: string | null,
): string {
  const raw = mapping === 'NameID' ? nameId : values[mapping]
  const value = Array.isArray(raw) ? raw[0] : raw
  if (typeof value !== 'string' || !value.includes('@'))
    throw refused(`the answer carries no e-mail in "${mapping}"`)
  return value.trim().toLowerCase()
}

/** What a checked SAML answer holds; `testId` when it answers a test sign-in's request. */
export interface VerifiedSaml {
  profile: Record<string, unknown> & { nameID?: string | null }
  assertionId: string
  /** The verified assertion's AuthnContextClassRef values. */
  authnContextClassRefs: string[]
  returnTo: string | null
  testId: string | null
}

/**
 * A SAML Response checked by node-saml against the provider's metadata: signature, audience, recipient,
 * validity and an InResponseTo this service issued (used up here). Refused with the reason in words.
 */
export async function verifySamlResponse(
  ctx: ServiceContext,
  provider: IdentityProviderRow,
  samlResponse: string,
): Promise<VerifiedSaml> {
  const idp = await parseIdpMetadata(provider.metadata_xml ?? '')
  const { cache, state } = samlRequests(ctx, provider.id, null)
  const saml = serviceProvider(serviceProviderUrls(ctx.config, provider.id), idp, cache)
  let profile: Awaited<ReturnType<typeof saml.validatePostResponseAsync>>['profile']
  try {
    profile = (await saml.validatePostResponseAsync({ SAMLResponse: samlResponse })).profile
  } catch (error) {
    throw refused((error as Error).message)
  }
  if (!profile) throw refused('the response carries no assertion')
  const assertion = await verifiedAssertion(profile)
  const assertionId = assertion?.id
  if (!assertionId) throw refused('the assertion has no ID')
  const acsUrl = serviceProviderUrls(ctx.config, provider.id).acsUrl
  if (assertion.recipients.length === 0 || assertion.recipients.some((r) => r !== acsUrl))
    throw refused('the assertion is addressed to another recipient')
  return {
    profile: profile as VerifiedSaml['profile'],
    assertionId,
    authnContextClassRefs: assertion.authnContextClassRefs,
    ...state,
  }
}

/** A SAML Response posted to the ACS: node-saml checks it; the assertion id is used once. */
export async function finishSaml(
  ctx: ServiceContext,
  providerId: string,
  samlResponse: string,
): Promise<SsoSignIn> {
  const provider = await usableProvider(ctx, providerId)
  if (provider.protocol !== 'saml') throw identityProviderNotFound()
  const answer = await verifySamlResponse(ctx, provider, samlResponse)
  // A test sign-in's answer signs nobody in, whichever route it reaches.
  if (answer.testId) throw refused('this answers a test sign-in')
  const { profile } = answer
  const email = assertedEmail(provider.email_mapping, profile, profile.nameID)
  const mfa = samlAssertedMfa(answer.authnContextClassRefs, profile)
  return signIn(ctx, provider, email, answer.returnTo ?? ctx.config.ssoReturnUrl, mfa, answer.assertionId)
}

/**
 * The OIDC redirect back, checked: the state must be one this service issued to this browser (and is
 * used up); openid-client checks the code exchange and the ID token. The claims, and the started request.
 */
export async function verifyOidcAnswer(
  ctx: ServiceContext,
  provider: IdentityProviderRow,
  query: Record<string, string>,
  browserState: string | undefined,
) {
  if (query.error) throw refused(`the provider answered ${query.error}`)
  const state = query.state ?? ''
  if (!state || state !== browserState) throw refused('the state does not belong to this browser')
  const request = await takeSsoRequest(ctx.db, provider.id, state, ctx.clock.now())
  if (request?.kind !== 'oidc' || !request.code_verifier || !request.nonce)
    throw refused('no sign-in was started with this state, or it was used or expired')
  const current = new URL(serviceProviderUrls(ctx.config, provider.id).redirectUri)
  for (const [key, value] of Object.entries(query)) current.searchParams.set(key, value)
  try {
    const expected = { state: request.id, nonce: request.nonce, codeVerifier: request.code_verifier }
    const config = await oidcConfig(ctx, provider)
    return { request, claims: await oidcFinish(config, current, expected, provider.email_mapping) }
  } catch (error) {
    if (error instanceof AppError) throw error
    throw refused((error as Error).message)
  }
}

/** The OIDC redirect back: verifyOidcAnswer, then the sign-in. */
export async function finishOidc(
  ctx: ServiceContext,
  providerId: string,
  query: Record<string, string>,
  browserState: string | undefined,
): Promise<SsoSignIn> {
  const provider = await usableProvider(ctx, providerId)
  if (provider.protocol !== 'oidc') throw identityProviderNotFound()
  const { request, claims } = await verifyOidcAnswer(ctx, provider, query, browserState)
  // A test sign-in's answer signs nobody in, whichever route it reaches.
  if (request.test_id) throw refused('this answers a test sign-in')
  if (claims.email_verified === false) throw refused('the provider has not verified this e-mail')
  return signIn(
    ctx,
    provider,
    assertedEmail(provider.email_mapping, claims),
    request.return_to ?? ctx.config.ssoReturnUrl,
    oidcAssertedMfa(claims),
  )
}

/**
 * The person must already be an enabled user with an accepted membership in the provider's tenant: no
 * account is created and no tenant joined silently. The sign-in is audited with the assertion id it used
 * up, in one transaction.
 */
async function signIn(
  ctx: ServiceContext,
  provider: IdentityProviderRow,
  email: string,
  returnTo: string,
  mfa: boolean,
  assertionId?: string,
): Promise<SsoSignIn> {
  const member = await findSignInMember(ctx.db, provider.tenant_id, email)
  const now = ctx.clock.now()
  await ctx.db.transaction().execute(async (trx) => {
    if (assertionId) {
      const expires = new Date(Math.max(now.getTime(), Date.now()) + 24 * 3_600_000)
      if (!(await rememberAssertion(trx, provider.id, assertionId, expires)))
        throw refused('this assertion was already used')
    }
    if (!member) return
    const actor: Actor = {
      kind: 'user',
      principalId: member.id,
      userId: member.id,
      email: member.email,
      displayName: member.email,
      platformRoleId: '',
      platformPermissions: new Set(),
      sso: { tenantId: provider.tenant_id, providerId: provider.id },
    }
    await recordAudit(trx, ctx.clock, actor, {
      action: 'user.sso_signed_in',
      tenantId: provider.tenant_id,
      target: { type: 'user', id: member.id },
      changes: { identityProvider: [null, provider.id] },
    })
  })
  if (!member)
    throw new AppError(
      'permission_denied',
      'This person has no accepted membership in the tenant of this identity provider; ask an administrator for an invitation',
    )
  return { userId: member.id, tenantId: provider.tenant_id, providerId: provider.id, returnTo, mfa }
}
