import { type Static, Type } from 'typebox'
import { SSO_TEST_STATUSES } from '../../db/schema.js'
import { Body, Description, Name, Nullable, ShortText, Timestamp, Uuid } from '../../http/schemas.js'

/** Identity providers of a tenant (docs/sso.md): one schema per shape drives validation, types and OpenAPI. */

export const PROTOCOLS = ['saml', 'oidc'] as const
export type Protocol = (typeof PROTOCOLS)[number]

/** What a set client secret reads back as; sending it back on update keeps the stored value. */
export const SECRET_MASK = '********'

const Url = (description: string) =>
  Type.String({
    maxLength: 2048,
    pattern: '^https?://[^\\s]+$',
    errorMessage: 'must be an http(s) URL',
    description,
  })

const MetadataFile = Type.String({
  maxLength: 1_000_000,
  description: "The IdP's SAML metadata XML (or that XML in base64), as the admin UIs upload it",
})

export const IdentityProviderParams = Type.Object({ tenantId: Uuid(), id: Uuid() })

export const ServiceProviderSchema = Type.Object(
  {
    entityId: Type.String({ description: 'SAML: the audience / SP entity id to give the IdP' }),
    acsUrl: Type.String({ description: 'SAML: the assertion consumer service (single sign-on) URL' }),
    metadataUrl: Type.String({ description: 'SAML: this service provider’s metadata' }),
    redirectUri: Type.String({ description: 'OIDC: the redirect (callback) URI to register' }),
    loginUrl: Type.String({ description: 'Where a person starts signing in through this provider' }),
  },
  { description: 'What to paste into the identity provider (docs/sso.md)' },
)

export const IdentityProviderSchema = Type.Object({
  id: Uuid(),
  tenantId: Uuid(),
  name: Type.String(),
  description: Type.String(),
  active: Type.Boolean(),
  identityProvider: Type.Union([Type.Literal('saml'), Type.Literal('oidc')]),
  emailMapping: Type.String({ description: 'Assertion attribute or claim holding the e-mail' }),
  metadataUrl: Nullable(Type.String()),
  metadataFile: Nullable(Type.String()),
  issuer: Nullable(Type.String()),
  clientId: Nullable(Type.String()),
  clientSecret: Type.String({ description: '"********" when set, "" otherwise; never the value' }),
  serviceProvider: ServiceProviderSchema,
  created: Timestamp(),
  createdBy: Uuid(),
  updated: Timestamp(),
  updatedBy: Uuid(),
})
export type IdentityProvider = Static<typeof IdentityProviderSchema>

const fields = {
  name: Name(),
  description: Type.Optional(Nullable(Description())),
  active: Type.Optional(Type.Boolean()),
  emailMapping: Type.Optional(
    Nullable(ShortText({ description: 'Default: the NameID (SAML) or the `email` claim (OIDC)' })),
  ),
  metadataUrl: Type.Optional(Nullable(Url('SAML: where the IdP publishes its metadata (https)'))),
  metadataFile: Type.Optional(Nullable(MetadataFile)),
  issuer: Type.Optional(Nullable(Url('OIDC: the issuer; its discovery document is read (https)'))),
  clientId: Type.Optional(Nullable(ShortText({ description: 'OIDC: the client id registered at the IdP' }))),
  clientSecret: Type.Optional(
    Nullable(ShortText({ maxLength: 1024, description: 'OIDC: the client secret (write-only)' })),
  ),
}

export const CreateIdentityProviderBody = Body(
  {
    ...fields,
    identityProvider: Type.Union([Type.Literal('saml'), Type.Literal('oidc')], {
      description: 'The protocol',
    }),
  },
  {
    description:
      'A SAML provider takes metadataUrl or metadataFile; an OIDC one issuer, clientId, clientSecret',
    // An OpenID Connect provider cannot work without these three (the service checks the same).
    if: { properties: { identityProvider: { const: 'oidc' } }, required: ['identityProvider'] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, never awaited
    then: {
      required: ['issuer', 'clientId', 'clientSecret'],
      properties: {
        issuer: { type: 'string', minLength: 1 },
        clientId: { type: 'string', minLength: 1 },
        clientSecret: { type: 'string', minLength: 1 },
      },
    },
  },
)
export type CreateIdentityProviderInput = Static<typeof CreateIdentityProviderBody>

export const UpdateIdentityProviderBody = Body({
  ...fields,
  name: Type.Optional(Name()),
  identityProvider: Type.Optional(Type.Union([Type.Literal('saml'), Type.Literal('oidc')])),
})
export type UpdateIdentityProviderInput = Static<typeof UpdateIdentityProviderBody>

export const ProviderSummary = Type.Object({ id: Uuid(), name: Type.String() })

export const AuthInfoSchema = Type.Object({
  tenantId: Nullable(Uuid()),
  identityProviders: Type.Array(ProviderSummary, { description: 'The default provider first' }),
  password: Type.Boolean({ description: 'Whether the platform password may be used there' }),
})

export const MeTenantSchema = Type.Object({
  tenantId: Uuid(),
  name: Type.String(),
  description: Type.String(),
  active: Type.Boolean(),
  password: Type.Boolean({ description: 'Whether the caller may use its platform password in this tenant' }),
  identityProviders: Type.Array(ProviderSummary),
})
export type MeTenant = Static<typeof MeTenantSchema>

export const SsoTestParams = Type.Object({ tenantId: Uuid(), id: Uuid(), testId: Uuid() })

/** A test sign-in (docs/sso.md#5-test-a-provider-before-people-depend-on-it): what the provider asserted, reported; nobody is signed in by it. */
export const SsoTestSchema = Type.Object({
  id: Uuid(),
  tenantId: Uuid(),
  providerId: Uuid(),
  status: Type.Enum(SSO_TEST_STATUSES, {
    type: 'string',
    description:
      'pending: open `url` in a browser; started: the browser went to the provider; succeeded / failed: its answer was judged',
  }),
  url: Type.String({
    description: 'Open in a browser to sign in at the provider; works once, within 10 minutes',
  }),
  email: Nullable(Type.String({ description: 'The e-mail the provider asserted, under emailMapping' })),
  nameId: Nullable(Type.String({ description: 'SAML: the assertion’s NameID' })),
  attributes: Nullable(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'SAML: the assertion’s attributes; OIDC: the ID token’s (and UserInfo’s) claims',
    }),
  ),
  error: Nullable(Type.String({ description: 'Why the answer was refused, in words' })),
  memberFound: Nullable(
    Type.Boolean({
      description: 'Whether that e-mail has an accepted membership here (a real sign-in would work)',
    }),
  ),
  created: Timestamp(),
  createdBy: Uuid(),
  started: Nullable(Timestamp()),
  completed: Nullable(Timestamp()),
  expires: Timestamp({ description: 'When the result is deleted' }),
})
export type SsoTest = Static<typeof SsoTestSchema>
