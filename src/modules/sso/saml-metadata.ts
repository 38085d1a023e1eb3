import { X509Certificate } from 'node:crypto'
// node-saml's own XML parser (xmldom with errors as rejections) and typed XPath helpers: the same
// parser that reads the assertions reads the metadata, with no second XML dependency.
import { parseDomFromString, xpath } from '@node-saml/node-saml/lib/xml.js'

/** What the service provider needs from an IdP's SAML 2.0 metadata. */
export interface IdpMetadata {
  entityId: string
  /** The SingleSignOnService location for the HTTP-Redirect binding (else HTTP-POST's). */
  ssoUrl: string
  /** PEM certificates the IdP signs with. */
  signingCerts: string[]
}

export class MetadataError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MetadataError'
  }
}

const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'

/** Accepts the XML itself or the XML in base64 (what some admin UIs upload). */
export function metadataText(file: string): string {
  const trimmed = file.trim()
  if (trimmed.startsWith('<')) return trimmed
  const decoded = Buffer.from(trimmed, 'base64').toString('utf8').trim()
  return decoded.startsWith('<') ? decoded : trimmed
}

/**
 * Reads an IdP's metadata: its entity id, where to send the AuthnRequest, and the certificates whose
 * signatures count. Anything unusable (not XML, no IdP descriptor, no SSO endpoint, no parseable signing
 * certificate) is a MetadataError with a sentence an administrator can act on.
 */
export async function parseIdpMetadata(xml: string): Promise<IdpMetadata> {
  let doc: Awaited<ReturnType<typeof parseDomFromString>>
  try {
    doc = await parseDomFromString(metadataText(xml))
  } catch {
    throw new MetadataError('is not well-formed XML')
  }
  const descriptor = xpath.selectElements(
    doc,
    "//*[local-name()='EntityDescriptor'][*[local-name()='IDPSSODescriptor']]",
  )[0]
  if (!descriptor) throw new MetadataError('has no EntityDescriptor with an IDPSSODescriptor')
  const entityId = descriptor.getAttribute('entityID')
  if (!entityId) throw new MetadataError('names no entityID')
  const services = xpath.selectElements(
    descriptor,
    "./*[local-name()='IDPSSODescriptor']/*[local-name()='SingleSignOnService']",
  )
  const service =
    services.find((s) => s.getAttribute('Binding') === REDIRECT) ??
    services.find((s) => s.getAttribute('Binding') === POST)
  const ssoUrl = service?.getAttribute('Location')
  if (!ssoUrl || !/^https?:\/\//.test(ssoUrl))
    throw new MetadataError('has no SingleSignOnService with an HTTP-Redirect or HTTP-POST location')
  const keys = xpath.selectElements(
    descriptor,
    "./*[local-name()='IDPSSODescriptor']/*[local-name()='KeyDescriptor']",
  )
  const signingCerts: string[] = []
  for (const key of keys) {
    const use = key.getAttribute('use')
    if (use && use !== 'signing') continue
    for (const cert of xpath.selectElements(key, ".//*[local-name()='X509Certificate']")) {
      const pem = toPem(cert.textContent ?? '')
      if (pem) signingCerts.push(pem)
    }
  }
  if (signingCerts.length === 0) throw new MetadataError('has no usable signing certificate')
  return { entityId, ssoUrl, signingCerts }
}

function toPem(base64: string): string | undefined {
  const body = base64.replace(/\s+/g, '')
  if (!body) return undefined
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----\n`
  try {
    new X509Certificate(pem)
    return pem
  } catch {
    return undefined
  }
}
