import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as validator from '@authenio/samlify-node-xmllint'
import * as samlify from 'samlify'

/**
 * A real SAML 2.0 identity provider for tests: samlify in IdP mode, signing with a key and self-signed
 * certificate this process generates (openssl). `respond()` makes a signed login response for our SP,
 * with any field overridden — how the attack tests make expired, misaddressed or foreign answers.
 */
samlify.setSchemaValidator(validator)

export function generateKeyPair(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'saml-idp-'))
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=test-idp', '-days', '2'].concat([
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ]),
      { stdio: 'ignore' },
    )
    return {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * An AuthnStatement saying how the person signed in at the IdP, for `respond`'s `AuthnStatement`
 * override: its AuthnContextClassRef (a multi-factor class asserts MFA, docs/security.md "Policy").
 */
export function authnStatement(classRef: string, at = new Date()): string {
  return (
    `<saml:AuthnStatement AuthnInstant="${at.toISOString()}"><saml:AuthnContext>` +
    `<saml:AuthnContextClassRef>${classRef}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`
  )
}

export interface TestIdp {
  metadata: string
  entityId: string
  /**
   * A base64 SAMLResponse for the SP, signed by this IdP; `overrides` replace template values (escaped),
   * but `AuthnStatement` and `AttributeStatement`, XML fragments put in as given (see authnStatement).
   */
  respond(spMetadata: string, email: string, overrides?: Record<string, string>): Promise<string>
}

export function createTestIdp(
  options: { ssoUrl?: string; keys?: { key: string; cert: string } } = {},
): TestIdp {
  const keys = options.keys ?? generateKeyPair()
  const entityId = `https://idp.test/${randomUUID()}`
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    privateKey: keys.key,
    signingCert: keys.cert,
    isAssertionEncrypted: false,
    wantAuthnRequestsSigned: false,
    nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
    singleSignOnService: [
      {
        Binding: samlify.Constants.namespace.binding.redirect,
        Location: options.ssoUrl ?? 'https://idp.test/sso',
      },
    ],
  })
  return {
    metadata: idp.getMetadata(),
    entityId,
    async respond(spMetadata, email, overrides = {}) {
      const sp = samlify.ServiceProvider({ metadata: spMetadata })
      const acs = /AssertionConsumerService[^>]*Location="([^"]+)"/.exec(spMetadata)?.[1] ?? ''
      const now = new Date()
      const later = new Date(now.getTime() + 5 * 60_000).toISOString()
      const values: Record<string, string> = {
        ID: `_${randomUUID()}`,
        AssertionID: `_${randomUUID()}`,
        Destination: acs,
        Audience: sp.entityMeta.getEntityID(),
        EntityID: sp.entityMeta.getEntityID(),
        SubjectRecipient: acs,
        Issuer: entityId,
        IssueInstant: now.toISOString(),
        AssertionConsumerServiceURL: acs,
        StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
        ConditionsNotBefore: now.toISOString(),
        ConditionsNotOnOrAfter: later,
        SubjectConfirmationDataNotOnOrAfter: later,
        NameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        NameID: email,
        InResponseTo: '',
        AuthnStatement: '',
        AttributeStatement: '',
        ...overrides,
      }
      const { context } = await idp.createLoginResponse(sp, { extract: {} } as never, 'post', { email }, {
        // The statements are XML fragments, put in as they are; every other value is escaped.
        customTagReplacement: (template: string) => ({
          id: values.ID,
          context: samlify.SamlLib.replaceTagsByValue(
            template
              .replace('{AuthnStatement}', values.AuthnStatement ?? '')
              .replace('{AttributeStatement}', values.AttributeStatement ?? ''),
            values,
          ),
        }),
      } as never)
      return context
    },
  }
}
