import type { FastifyInstance } from 'fastify'
import { html } from '../../../html.js'
import { apiErrorOf } from '../api/client.js'
import { type Errors, text } from '../kit/forms.js'
import {
  type ConsolePages,
  changedMeanwhilePage,
  formErrorsOf,
  type PageResult,
  refusalPage,
  type Signed,
} from '../kit/pages.js'
import {
  readRecordFor,
  readTenantFor,
  type TenantOf,
  tenantCrumbs,
  tenantListPage,
} from '../kit/tenant-scope.js'
import {
  type IdentityProvider,
  NOTICES,
  PROTOCOL_NAMES,
  type Protocol,
  type ProviderFormValues,
  providerBody,
  providerForm,
  providersBody,
} from './identity-providers.views.js'

export type ProviderParams = { tenantId: string; providerId: string; testId?: string }

/** The tenant and (when the path names one) the identity provider with its ETag; or the refusal page. */
export function loadProvider(signed: Signed, params: ProviderParams) {
  return readRecordFor(
    signed,
    params.tenantId,
    params.providerId,
    { code: 404, reason: 'identity_provider_not_found', message: 'No such identity provider' },
    (tenantId, id) =>
      signed.api.GET('/v1/tenants/{tenantId}/identity-providers/{id}', {
        params: { path: { tenantId, id } },
      }),
  )
}

export const providersOf = (tenant: { id: string }) => `/console/tenants/${tenant.id}/identity-providers`

export function providerCrumbs(tenant: TenantOf, ...rest: [string, string | undefined][]) {
  return tenantCrumbs(tenant, ['Identity providers', providersOf(tenant)], ...rest)
}

function valuesOf(form: Record<string, unknown>): ProviderFormValues {
  return {
    name: text(form.name).trim(),
    description: text(form.description).trim(),
    metadataUrl: text(form.metadataUrl).trim(),
    issuer: text(form.issuer).trim(),
    clientId: text(form.clientId).trim(),
    emailMapping: text(form.emailMapping).trim(),
    active: form.active === 'on',
  }
}

/** The API's field names on the form's (the metadata URL is refused as `metadata-url`). */
const RENAME = { 'metadata-url': 'metadataUrl' }

/**
 * A tenant's identity providers (API.md §17 "Identity providers"): SAML by metadata URL or uploaded
 * file, OpenID Connect by issuer, client ID and write-only client secret; the service provider's URLs
 * to copy; edit (If-Match), activate and deactivate. Test sign-ins: sso-test.routes.ts.
 */
export function identityProviderRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const route = (path: string) => `/console/tenants/:tenantId/identity-providers${path}`

  router.get(route(''), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as ProviderParams).tenantId)
      if ('refused' in read) return read.refused
      const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/identity-providers', {
        params: { path: { tenantId: read.tenant.id } },
      })
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      return tenantListPage(
        signed,
        read.tenant,
        'Identity providers',
        providersBody({ tenant: read.tenant, providers: data.result }),
      )
    }),
  )

  function formPage(
    signed: Signed,
    tenant: TenantOf,
    protocol: Protocol,
    values: ProviderFormValues,
    options: { edit?: { provider: IdentityProvider; version: string }; errors?: Errors; status?: number },
  ): PageResult {
    const { edit, errors } = options
    const title = edit ? `Edit ${edit.provider.name}` : `New ${PROTOCOL_NAMES[protocol]} provider`
    return [
      options.status ?? 200,
      signed.page(
        {
          title: errors ? `Error: ${title}` : title,
          area: 'tenants',
          crumbs: providerCrumbs(tenant, [title, undefined]),
        },
        html`<h1>${title}</h1>${providerForm({
          action: edit ? `${providersOf(tenant)}/${edit.provider.id}/edit` : providersOf(tenant),
          token: signed.form(),
          version: edit?.version,
          protocol,
          values,
          secretSet: Boolean(edit?.provider.clientSecret),
          errors,
          editing: edit !== undefined,
        })}`,
      ),
    ]
  }

  const protocolOf = (value: unknown): Protocol | undefined =>
    value === 'saml' || value === 'oidc' ? value : undefined

  router.get(route('/new'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as ProviderParams).tenantId)
      if ('refused' in read) return read.refused
      const protocol = protocolOf((request.query as Record<string, unknown>).protocol)
      if (!protocol) return { redirect: providersOf(read.tenant) }
      return formPage(signed, read.tenant, protocol, valuesOf({}), {})
    }),
  )

  router.post(route(''), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as ProviderParams).tenantId)
      if ('refused' in read) return read.refused
      const form = request.body as Record<string, unknown>
      const protocol = protocolOf(form.protocol)
      if (!protocol) return { redirect: providersOf(read.tenant) }
      const values = valuesOf(form)
      const file = text(form.metadataFile)
      const common = {
        name: values.name,
        description: values.description || null,
        emailMapping: values.emailMapping || null,
        active: values.active,
      }
      const body =
        protocol === 'saml'
          ? {
              ...common,
              identityProvider: 'saml' as const,
              ...(values.metadataUrl ? { metadataUrl: values.metadataUrl } : {}),
              ...(file.trim() ? { metadataFile: file } : {}),
            }
          : {
              ...common,
              identityProvider: 'oidc' as const,
              issuer: values.issuer,
              clientId: values.clientId,
              clientSecret: text(form.clientSecret),
            }
      const { data, error, response } = await signed.api.POST('/v1/tenants/{tenantId}/identity-providers', {
        params: { path: { tenantId: read.tenant.id } },
        headers: { 'idempotency-key': signed.formId },
        body,
      })
      if (data) return { redirect: `${providersOf(read.tenant)}/${data.result.id}?done=created` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code !== 400 && refused.code !== 409) return refusalPage(signed, refused)
      const errors = formErrorsOf(refused, RENAME)
      return formPage(signed, read.tenant, protocol, values, { errors, status: refused.code })
    }),
  )

  router.get(route('/:providerId'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params as ProviderParams)
      if ('refused' in read) return read.refused
      const notice = NOTICES[text((request.query as Record<string, unknown>).done)]
      return [
        200,
        signed.page(
          {
            title: read.record.name,
            area: 'tenants',
            crumbs: providerCrumbs(read.tenant, [read.record.name, undefined]),
          },
          providerBody({ tenant: read.tenant, provider: read.record, form: signed.form, notice }),
        ),
      ]
    }),
  )

  router.get(route('/:providerId/edit'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params as ProviderParams)
      if ('refused' in read) return read.refused
      const p = read.record
      const values: ProviderFormValues = {
        name: p.name,
        description: p.description,
        metadataUrl: p.metadataUrl ?? '',
        issuer: p.issuer ?? '',
        clientId: p.clientId ?? '',
        emailMapping: p.emailMapping,
        active: p.active,
      }
      const edit = { provider: p, version: read.etag }
      return formPage(signed, read.tenant, p.identityProvider, values, { edit })
    }),
  )

  router.post(route('/:providerId/edit'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params as ProviderParams)
      if ('refused' in read) return read.refused
      const p = read.record
      const form = request.body as Record<string, unknown>
      const values = valuesOf(form)
      const version = text(form.version)
      const file = text(form.metadataFile)
      const secret = text(form.clientSecret)
      // Only what changed is sent: unchanged metadata is not fetched again, an empty secret box keeps it.
      const protocolFields =
        p.identityProvider === 'saml'
          ? file.trim()
            ? { metadataFile: file, metadataUrl: null }
            : values.metadataUrl && values.metadataUrl !== p.metadataUrl
              ? { metadataUrl: values.metadataUrl }
              : {}
          : { issuer: values.issuer, clientId: values.clientId, ...(secret ? { clientSecret: secret } : {}) }
      const base = `${providersOf(read.tenant)}/${p.id}`
      const { data, error, response } = await signed.api.PUT(
        '/v1/tenants/{tenantId}/identity-providers/{id}',
        {
          params: { path: { tenantId: read.tenant.id, id: p.id } },
          headers: { 'if-match': version || '"none"' },
          body: {
            name: values.name,
            description: values.description || null,
            emailMapping: values.emailMapping || null,
            active: values.active,
            ...protocolFields,
          },
        },
      )
      if (data) return { redirect: `${base}?done=saved` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code === 412) return changedMeanwhilePage(signed, 'identity provider', `${base}/edit`)
      if (refused.code !== 400 && refused.code !== 409) return refusalPage(signed, refused)
      const edit = { provider: p, version }
      const errors = formErrorsOf(refused, RENAME)
      return formPage(signed, read.tenant, p.identityProvider, values, { edit, errors, status: refused.code })
    }),
  )

  router.post(route('/:providerId/active'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params as ProviderParams)
      if ('refused' in read) return read.refused
      const active = text((request.body as Record<string, unknown>).active) === 'true'
      const { data, error, response } = await signed.api.PUT(
        '/v1/tenants/{tenantId}/identity-providers/{id}',
        {
          params: { path: { tenantId: read.tenant.id, id: read.record.id } },
          headers: { 'if-match': read.etag || '"none"' },
          body: { active },
        },
      )
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      return {
        redirect: `${providersOf(read.tenant)}/${read.record.id}?done=${active ? 'activated' : 'deactivated'}`,
      }
    }),
  )
}
