import { Type } from 'typebox'
import { created } from '../../http/created.js'
import { Result, TenantParams } from '../../http/schemas.js'
import { answerTenantRecord, answerTenantRecordChange } from '../../http/tenant-record-answers.js'
import {
  tenantCreateSchema,
  tenantRecordSchema,
  tenantRecordUpdateSchema,
} from '../../http/tenant-record-schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import {
  CreateIdentityProviderBody,
  IdentityProviderParams,
  IdentityProviderSchema,
  SsoTestParams,
  SsoTestSchema,
  UpdateIdentityProviderBody,
} from './identity-providers.schemas.js'
import {
  createIdentityProvider,
  getIdentityProvider,
  listIdentityProviders,
  updateIdentityProviderById,
} from './identity-providers.service.js'
import {
  PasswordPolicyImpactQuery,
  PasswordPolicyImpactSchema,
  passwordPolicyImpact,
} from './password-policy.js'
import { readIdentityProviderTest, startIdentityProviderTest } from './sso-test.service.js'

const tags = ['identity providers']

/** A tenant's identity providers (docs/sso.md). */
export const identityProviderRoutes: RouteModule = async (app, ctx) => {
  app.get(
    '/tenants/:tenantId/identity-providers',
    {
      schema: {
        tags,
        operationId: 'listIdentityProviders',
        errors: ['tenant_not_found', 'permission_denied'],
        summary: "List a tenant's identity providers",
        description: 'Needs IDENTITY_PROVIDERS_READ or IDENTITY_PROVIDERS_UPDATE in the tenant.',
        params: TenantParams,
        response: { 200: Result(Type.Array(IdentityProviderSchema)) },
      },
    },
    async (request) => ({ result: await listIdentityProviders(ctx, request.actor, request.params.tenantId) }),
  )

  app.post(
    '/tenants/:tenantId/identity-providers',
    {
      schema: tenantCreateSchema(
        {
          tags,
          operationId: 'createIdentityProvider',
          summary: 'Add a SAML 2.0 or OpenID Connect identity provider to a tenant',
          description:
            'Needs IDENTITY_PROVIDERS_UPDATE in the tenant. SAML: metadataUrl (fetched under the outbound rule) or ' +
            'metadataFile, validated now (400 on attribute["metadata-url"] or attribute.metadataFile). OIDC: issuer ' +
            '(discovery is read now; 400 on attribute.issuer), clientId, clientSecret (encrypted, write-only).' +
            ' A step-up operation for a person with a second factor: without one from the last 10 minutes, 401 reauthentication_required carrying the challenge (docs/security.md, "Step-up").',
        },
        {
          ...CreateIdentityProviderBody,
          examples: [
            {
              name: 'Okta',
              identityProvider: 'oidc',
              issuer: 'https://acme.okta.com',
              clientId: '0oa1b2c3d4e5f6g7h8i9',
              clientSecret: 's3cr3t-from-the-okta-app',
            },
          ],
        },
        IdentityProviderSchema,
        ['reauthentication_required'],
      ),
    },
    async (request, reply) => {
      const provider = await createIdentityProvider(ctx, request.actor, request.params.tenantId, request.body)
      return created(reply, `/v1/tenants/${provider.tenantId}/identity-providers/${provider.id}`, provider)
    },
  )

  app.get(
    '/tenants/:tenantId/identity-providers/:id',
    {
      schema: tenantRecordSchema(
        {
          tags,
          operationId: 'getIdentityProvider',
          summary: 'Read an identity provider',
          description: 'Needs IDENTITY_PROVIDERS_READ or IDENTITY_PROVIDERS_UPDATE in the tenant.',
        },
        IdentityProviderParams,
        IdentityProviderSchema,
        'identity_provider_not_found',
      ),
    },
    answerTenantRecord(ctx, 'id', getIdentityProvider),
  )

  app.put(
    '/tenants/:tenantId/identity-providers/:id',
    {
      config: { ifMatch: 'identity_providers' },
      schema: tenantRecordUpdateSchema(
        {
          tags,
          operationId: 'updateIdentityProvider',
          summary: 'Change an identity provider (partial)',
          description:
            'Needs IDENTITY_PROVIDERS_UPDATE in the tenant. The protocol cannot change. clientSecret "********" ' +
            'keeps the stored secret. A step-up operation for a person with a second factor: without one from the last 10 minutes, 401 reauthentication_required carrying the challenge (docs/security.md, "Step-up").',
        },
        IdentityProviderParams,
        { ...UpdateIdentityProviderBody, examples: [{ active: false, description: 'Retired on 1 March' }] },
        IdentityProviderSchema,
        ['identity_provider_not_found', 'reauthentication_required'],
      ),
    },
    answerTenantRecordChange(ctx, 'id', updateIdentityProviderById),
  )

  app.post(
    '/tenants/:tenantId/identity-providers/:id/test',
    {
      schema: {
        tags,
        operationId: 'startIdentityProviderTest',
        errors: ['tenant_not_found', 'permission_denied', 'identity_provider_not_found'],
        summary: 'Start a test sign-in: its result is reported, nobody is signed in',
        description:
          'Needs IDENTITY_PROVIDERS_UPDATE in the tenant. Works while the provider is inactive. Open `url` in a ' +
          'browser (once, within 10 minutes): after the provider, the browser lands on a page reporting what ' +
          'it asserted — e-mail, attributes or claims, or why the answer was refused — and the same report is ' +
          'GET …/test/{testId} for 24 h. No token is issued and no account or membership is created.',
        params: IdentityProviderParams,
        response: { 201: Result(SsoTestSchema) },
      },
    },
    async (request, reply) => {
      const { tenantId, id } = request.params
      const test = await startIdentityProviderTest(ctx, request.actor, tenantId, id)
      return created(
        reply,
        `/v1/tenants/${test.tenantId}/identity-providers/${test.providerId}/test/${test.id}`,
        test,
      )
    },
  )

  app.get(
    '/tenants/:tenantId/identity-providers/:id/test/:testId',
    {
      schema: tenantRecordSchema(
        {
          tags,
          operationId: 'getIdentityProviderTest',
          summary: 'What a test sign-in reported',
          description: 'Needs IDENTITY_PROVIDERS_UPDATE in the tenant. Kept 24 h.',
        },
        SsoTestParams,
        SsoTestSchema,
        'sso_test_not_found',
      ),
    },
    async (request) => {
      const { tenantId, id, testId } = request.params
      return { result: await readIdentityProviderTest(ctx, request.actor, tenantId, id, testId) }
    },
  )

  app.get(
    '/tenants/:tenantId/password-policy-impact',
    {
      schema: {
        tags,
        operationId: 'getPasswordPolicyImpact',
        errors: ['tenant_not_found', 'permission_denied'],
        summary: 'How many members would lose (or gain) password sign-in under another password policy',
        description:
          'Needs MANAGE_TENANT in the tenant. Read only: nothing changes. `cxengageIdentityProvider` is the ' +
          'policy being considered (PUT /v1/tenants/{id} sets it); the counts are of the tenant’s accepted ' +
          'members, under the rule of docs/sso.md (denied → never; a membership’s noPassword; else the policy).',
        params: TenantParams,
        querystring: PasswordPolicyImpactQuery,
        response: { 200: Result(PasswordPolicyImpactSchema) },
      },
    },
    async (request) => {
      const { tenantId } = request.params
      const proposed = request.query.cxengageIdentityProvider
      return { result: await passwordPolicyImpact(ctx, request.actor, tenantId, proposed) }
    },
  )
}
