/**
 * Whether an identity provider asserted more than one factor for a sign-in (docs/security.md, "Policy",
 * trust in the identity provider). A tenant whose `mfaAcceptIdp` is `asserted` counts its provider's
 * sign-in as a second factor only then. Only what the provider signed is read: the ID token's claims
 * openid-client checked, the assertion node-saml verified.
 */

/** OIDC `amr` values (RFC 8176) that name more than a password. */
const OIDC_MFA_METHODS = new Set(['mfa', 'otp', 'hwk', 'swk'])

/**
 * SAML 2.0 authentication context classes of more than one factor (SAML 2.0 Authentication Context,
 * section 3.4): two-factor mobile contracts, a time-synchronised token (the token and its PIN), a smart
 * card holding a private key unlocked by a PIN. `Smartcard` alone (possession only) and the password
 * classes are one factor. Beside them, what providers send in practice: Microsoft Entra ID's
 * `multipleauthn` and the REFEDS MFA profile.
 */
export const SAML_MFA_CLASSES: ReadonlySet<string> = new Set([
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorUnregistered',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:SmartcardPKI',
  'http://schemas.microsoft.com/claims/multipleauthn',
  'https://refeds.org/profile/mfa',
])

/** Entra ID also lists the methods used in this attribute, `multipleauthn` among them after MFA. */
const ENTRA_METHODS_ATTRIBUTE = 'http://schemas.microsoft.com/claims/authnmethodsreferences'

function values(raw: unknown): string[] {
  if (typeof raw === 'string') return [raw]
  return Array.isArray(raw) ? raw.filter((v): v is string => typeof v === 'string') : []
}

/** An OIDC ID token's claims: `amr` holding `mfa`, `otp`, `hwk` or `swk`. */
export function oidcAssertedMfa(claims: Record<string, unknown>): boolean {
  return values(claims.amr).some((method) => OIDC_MFA_METHODS.has(method))
}

/** A verified SAML assertion: a multi-factor AuthnContextClassRef, or Entra ID's methods attribute. */
export function samlAssertedMfa(classRefs: readonly string[], profile: Record<string, unknown>): boolean {
  const asserted = [...classRefs, ...values(profile[ENTRA_METHODS_ATTRIBUTE])]
  return asserted.some((value) => SAML_MFA_CLASSES.has(value.trim()))
}
