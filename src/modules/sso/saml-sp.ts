import {
  type CacheItem,
  type CacheProvider,
  type Profile,
  SAML,
  ValidateInResponseTo,
} from '@node-saml/node-saml'
import { parseDomFromString, xpath } from '@node-saml/node-saml/lib/xml.js'
import type { IdpMetadata } from './saml-metadata.js'

/**
 * The SAML 2.0 service provider, through @node-saml/node-saml: it checks the XML signature against the
 * IdP's certificates (assertions must be signed), the audience, the recipient/destination, the validity
 * window and InResponseTo (only ids this service issued, each once: the cache is the database, shared by
 * every process). No XML signature or condition is checked here by hand.
 */
export interface SpEndpoints {
  entityId: string
  acsUrl: string
}

/** How long a started login may take at the IdP. */
export const SAML_REQUEST_TTL_MS = 10 * 60_000

export function serviceProvider(endpoints: SpEndpoints, idp: IdpMetadata, requests: CacheProvider): SAML {
  return new SAML({
    callbackUrl: endpoints.acsUrl,
    entryPoint: idp.ssoUrl,
    issuer: endpoints.entityId,
    audience: endpoints.entityId,
    idpIssuer: idp.entityId,
    idpCert: idp.signingCerts,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
    cacheProvider: requests,
    acceptedClockSkewMs: 30_000,
    identifierFormat: null,
    disableRequestedAuthnContext: true,
  })
}

export function spMetadataXml(endpoints: SpEndpoints): string {
  // node-saml builds the metadata; the IdP settings do not matter to it.
  const saml = new SAML({ callbackUrl: endpoints.acsUrl, issuer: endpoints.entityId, idpCert: 'unused' })
  return saml.generateServiceProviderMetadata(null, null)
}

/**
 * The id, subject-confirmation recipients and authentication context classes of the assertion node-saml
 * verified — read from the signed assertion it returns, never from another element of the response
 * (signature wrapping). node-saml checks the audience but not the Recipient, so the ACS compares that one
 * itself; the classes say whether the provider asserted more than one factor (asserted-mfa.ts).
 */
export async function verifiedAssertion(
  profile: Profile,
): Promise<{ id: string | undefined; recipients: string[]; authnContextClassRefs: string[] } | undefined> {
  const xml = profile.getAssertionXml?.()
  if (!xml) return undefined
  const doc = await parseDomFromString(xml)
  const recipients = xpath
    .selectElements(doc, "//*[local-name()='SubjectConfirmationData']")
    .map((node) => node.getAttribute('Recipient') ?? '')
  const authnContextClassRefs = xpath
    .selectElements(
      doc,
      "//*[local-name()='AuthnStatement']/*[local-name()='AuthnContext']/*[local-name()='AuthnContextClassRef']",
    )
    .map((node) => node.textContent?.trim() ?? '')
  return { id: doc.documentElement?.getAttribute('ID') ?? undefined, recipients, authnContextClassRefs }
}

export type { CacheItem, CacheProvider, Profile }
