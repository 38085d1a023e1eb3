import type { Static } from 'typebox'
import { html } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import type { Errors } from '../kit/forms.js'
import { Checkbox, Done, Form, OneOf, Query, RecordPath, TenantPath, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { activeToggleRoute, ifMatch } from '../kit/record-edits.js'
import { called, formErrorsOf, type Redraw } from '../kit/refusals.js'
import {
  readRecordFor,
  readTenantFor,
  type TenantOf,
  tenantCrumbs,
  tenantListRoute,
} from '../kit/tenant-scope.js'
import {
  type IdentityProvider,
  NOTICES,
  PROTOCOL_NAMES,
  type Protocol,
  type ProviderChanges,
  type ProviderFormValues,
  providerBody,
  providerForm,
  providersBody,
} from './identity-providers.views.js'

export const ProviderPath = RecordPath('providerId')
const ProtocolChoice = OneOf(['saml', 'oidc'])
/**
 * The provider form (multipart: a SAML metadata file may be uploaded): SAML by metadata URL or file,
 * OpenID Connect by issuer, client ID and a write-only secret.
 */
const ProviderForm = Form({
  protocol: ProtocolChoice,
  name: Typed(),
  description: Typed(),
  metadataUrl: Typed(),
  // An identity provider's metadata document; the upload as a whole is bounded by console-plugin.ts.
  metadataFile: Typed(1024 * 1024),
  issuer: Typed(),
  clientId: Typed(),
  clientSecret: Typed(),
  emailMapping: Typed(),
  active: Checkbox,
})

/** The tenant and the identity provider the path names, with its ETag; a refusal is thrown. */
export function loadProvider(signed: Signed, params: { tenantId: string; providerId: string }) {
  return readRecordFor(signed, params.tenantId, params.providerId, (tenantId, id) =>
    signed.api.GET('/v1/tenants/{tenantId}/identity-providers/{id}', {
      params: { path: { tenantId, id } },
    }),
  )
}

/** The provider's PUT (edit, activate / deactivate): `changes` under If-Match with the version read. */
export function saveProvider(
  signed: Signed,
  read: { tenant: { id: string }; record: { id: string } },
  version: string,
  changes: ProviderChanges,
) {
  return signed.api.PUT('/v1/tenants/{tenantId}/identity-providers/{id}', {
    params: { path: { tenantId: read.tenant.id, id: read.record.id } },
    headers: ifMatch(version),
    body: changes,
  })
}

export const providersOf = (tenant: { id: string }) => `/console/tenants/${tenant.id}/identity-providers`

export function providerCrumbs(tenant: TenantOf, ...rest: [string, string | undefined][]) {
  return tenantCrumbs(tenant, ['Identity providers', providersOf(tenant)], ...rest)
}

function valuesOf(form: Static<typeof ProviderForm>): ProviderFormValues {
  return {
    name: (form.name ?? '').trim(),
    description: (form.description ?? '').trim(),
    metadataUrl: (form.metadataUrl ?? '').trim(),
    issuer: (form.issuer ?? '').trim(),
    clientId: (form.clientId ?? '').trim(),
    emailMapping: (form.emailMapping ?? '').trim(),
    active: form.active === 'on',
  }
}

/** The API's field names on the form's (the metadata URL is refused as `metadata-url`). */
const RENAME = { 'metadata-url': 'metadataUrl' }

/**
 * A tenant's identity providers (docs/console-admin.md "Identity providers"): SAML by metadata URL or uploaded
 * file, OpenID Connect by issuer, client ID and write-only client secret; the service provider's URLs
 * to copy; edit (If-Match), activate and deactivate. Test sign-ins: sso-test.routes.ts.
 */
export function identityProviderRoutes(router: TypedApp, pages: ConsolePages): void {
  const route = (path: string) => `/console/tenants/:tenantId/identity-providers${path}`

  tenantListRoute(router, pages, route(''), 'Identity providers', {
    read: (signed, tenant) =>
      signed.api.GET('/v1/tenants/{tenantId}/identity-providers', {
        params: { path: { tenantId: tenant.id } },
      }),
    body: (_, tenant, providers) => providersBody({ tenant, providers }),
  })

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
          title: title,
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

  const newSchema = { hide: true, params: TenantPath, querystring: Query({ protocol: ProtocolChoice }) }
  router.get(route('/new'), { schema: newSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const protocol: Protocol | undefined = request.query.protocol
      if (!protocol) return { redirect: providersOf(read.tenant) }
      return formPage(signed, read.tenant, protocol, valuesOf({}), {})
    }),
  )

  /** A refused write: the form again with the refusal beside its field (400, 409). */
  const redrawn = (form: (errors: Errors, status: number) => PageResult): Redraw => ({
    form,
    errorsOf: (refused) => formErrorsOf(refused, RENAME),
  })

  router.post(
    route(''),
    { schema: { hide: true, params: TenantPath, body: ProviderForm } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const read = await readTenantFor(signed, request.params.tenantId)
        const form = request.body
        const protocol: Protocol | undefined = form.protocol
        if (!protocol) return { redirect: providersOf(read.tenant) }
        const values = valuesOf(form)
        const file = form.metadataFile ?? ''
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
                clientSecret: form.clientSecret ?? '',
              }
        const { data } = await called(
          signed.api.POST('/v1/tenants/{tenantId}/identity-providers', {
            params: { path: { tenantId: read.tenant.id } },
            headers: { 'idempotency-key': signed.formId },
            body,
          }),
          redrawn((errors, status) => formPage(signed, read.tenant, protocol, values, { errors, status })),
        )
        return { redirect: `${providersOf(read.tenant)}/${data.result.id}?done=created` }
      }),
  )

  const pageSchema = { hide: true, params: ProviderPath, querystring: Query({ done: Done }) }
  router.get(route('/:providerId'), { schema: pageSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params)
      const notice = NOTICES[request.query.done ?? '']
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

  router.get(route('/:providerId/edit'), { schema: { hide: true, params: ProviderPath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params)
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

  const editSchema = { hide: true, params: ProviderPath, body: ProviderForm }
  router.post(route('/:providerId/edit'), { schema: editSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params)
      const p = read.record
      const form = request.body
      const values = valuesOf(form)
      const version = form.version ?? ''
      const file = form.metadataFile ?? ''
      const secret = form.clientSecret ?? ''
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
      const edit = { provider: p, version }
      await called(
        saveProvider(signed, read, version, {
          name: values.name,
          description: values.description || null,
          emailMapping: values.emailMapping || null,
          active: values.active,
          ...protocolFields,
        }),
        {
          ...redrawn((errors, status) =>
            formPage(signed, read.tenant, p.identityProvider, values, { edit, errors, status }),
          ),
          changed: { what: 'identity provider', href: `${base}/edit` },
        },
      )
      return { redirect: `${base}?done=saved` }
    }),
  )

  activeToggleRoute(router, pages, route('/:providerId/active'), ProviderPath, {
    load: loadProvider,
    put: (signed, read, body) => saveProvider(signed, read, read.etag, body),
    page: ({ tenant, record }) => `${providersOf(tenant)}/${record.id}`,
    notices: ['activated', 'deactivated'],
  })
}
