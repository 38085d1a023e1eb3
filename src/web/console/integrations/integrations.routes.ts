import type { Static } from 'typebox'
import { html } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { type IntegrationType, normalizeType } from '../../../modules/integrations/integration-types.js'
import type { ApiError } from '../api/client.js'
import type { Errors } from '../kit/forms.js'
import { Checkbox, Done, OpenForm, Query, TenantPath, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { called, type Redraw } from '../kit/refusals.js'
import { readTenantFor, type TenantOf, tenantListPage } from '../kit/tenant-scope.js'
import {
  fieldValuesOf,
  integrationErrorsOf,
  propertiesOf,
  secretKeysSet,
  typeLabel,
} from './integration-fields.js'
import {
  crumbsOf,
  IntegrationPath,
  integrationRecordRoutes,
  listOf,
  loadIntegration,
  saveIntegration,
} from './integration-record.routes.js'
import {
  chooseTypeBody,
  type Integration,
  type IntegrationFormValues,
  integrationForm,
  integrationsBody,
  NOTICES,
} from './integrations.views.js'

/**
 * The integration form: the type's own settings are named by their keys (integration-fields.ts), a JSON
 * box of one of them up to 64 KiB.
 */
const IntegrationForm = OpenForm(
  { type: Typed(64), name: Typed(), description: Typed(), active: Checkbox },
  64 * 1024,
)

/**
 * A tenant's integrations (docs/console-admin.md "Integrations"): list, create and edit by type with the type's own
 * fields (integration-fields.ts derives them from the API's declaration), secrets write-only,
 * activation naming what is missing, and delete after a confirmation.
 */
export function integrationRoutes(router: TypedApp, pages: ConsolePages): void {
  integrationRecordRoutes(router, pages)
  const route = (path: string) => `/console/tenants/:tenantId/integrations${path}`

  const listSchema = { hide: true, params: TenantPath, querystring: Query({ done: Done }) }
  router.get(route(''), { schema: listSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const { data } = await called(
        signed.api.GET('/v1/tenants/{tenantId}/integrations', {
          params: { path: { tenantId: read.tenant.id }, query: { limit: 100 } },
        }),
      )
      const notice = NOTICES[request.query.done ?? '']
      return tenantListPage(
        signed,
        read.tenant,
        'Integrations',
        integrationsBody({ tenant: read.tenant, integrations: data.result, notice }),
      )
    }),
  )

  function formPage(
    signed: Signed,
    tenant: TenantOf,
    type: IntegrationType,
    values: IntegrationFormValues,
    options: { edit?: { integration: Integration; version: string }; errors?: Errors; status?: number },
  ): PageResult {
    const { edit, errors } = options
    const title = edit ? `Edit ${edit.integration.name}` : `New ${typeLabel(type)} integration`
    const action = edit ? `${listOf(tenant)}/${edit.integration.id}/edit` : listOf(tenant)
    return [
      options.status ?? 200,
      signed.page(
        {
          title: title,
          area: 'tenants',
          crumbs: crumbsOf(tenant, [title, undefined]),
        },
        html`<h1>${title}</h1>${integrationForm({
          action,
          token: signed.form(),
          version: edit?.version,
          type,
          values,
          secretsSet: edit ? secretKeysSet(type, edit.integration.properties) : new Set(),
          errors,
          editing: edit !== undefined,
        })}`,
      ),
    ]
  }

  // A type the console does not know (any ASCII case is known) offers the choice of types instead.
  const newSchema = { hide: true, params: TenantPath, querystring: Query({ type: Typed(64) }) }
  router.get(route('/new'), { schema: newSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const type = normalizeType(request.query.type)
      if (!type)
        return [
          200,
          signed.page(
            {
              title: 'New integration',
              area: 'tenants',
              crumbs: crumbsOf(read.tenant, ['New integration', undefined]),
            },
            chooseTypeBody(read.tenant),
          ),
        ]
      return formPage(
        signed,
        read.tenant,
        type,
        { name: '', description: '', active: false, properties: fieldValuesOf(type, {}) },
        {},
      )
    }),
  )

  /** What a submitted form asks for: its values, the API body's parts, and the form's own errors. */
  function submitted(type: IntegrationType, form: Static<typeof IntegrationForm>) {
    const { properties, values, errors } = propertiesOf(type, form)
    const formValues: IntegrationFormValues = {
      name: (form.name ?? '').trim(),
      description: (form.description ?? '').trim(),
      active: form.active === 'on',
      properties: values,
    }
    return { formValues, properties, errors }
  }

  /** A refused write's field errors on the form (400, 409): the type's settings by their boxes. */
  function errorsOf(refused: ApiError): Errors {
    const errors = refused.attribute ? integrationErrorsOf(refused.attribute) : {}
    if (refused.reason === 'integration_name_taken')
      errors.name = 'is taken by another integration of this tenant'
    if (Object.keys(errors).length === 0) errors._ = refused.message
    return errors
  }

  const createSchema = { hide: true, params: TenantPath, body: IntegrationForm }
  router.post(route(''), { schema: createSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const type = normalizeType(request.body.type)
      if (!type) return { redirect: `${listOf(read.tenant)}/new` }
      const { formValues, properties, errors } = submitted(type, request.body)
      if (Object.keys(errors).length)
        return formPage(signed, read.tenant, type, formValues, { errors, status: 400 })
      const redraw: Redraw = {
        errorsOf,
        form: (e, status) => formPage(signed, read.tenant, type, formValues, { errors: e, status }),
      }
      const { data } = await called(
        signed.api.POST('/v1/tenants/{tenantId}/integrations', {
          params: { path: { tenantId: read.tenant.id } },
          headers: { 'idempotency-key': signed.formId },
          body: {
            type,
            ...(formValues.name ? { name: formValues.name } : {}),
            description: formValues.description || null,
            active: formValues.active,
            properties,
          },
        }),
        redraw,
      )
      return { redirect: `${listOf(read.tenant)}/${data.result.id}?done=saved` }
    }),
  )
  router.get(
    route('/:integrationId/edit'),
    { schema: { hide: true, params: IntegrationPath } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const read = await loadIntegration(signed, request.params)
        const i = read.record
        const type = i.type as IntegrationType
        const values = {
          name: i.name,
          description: i.description ?? '',
          active: i.active,
          properties: fieldValuesOf(type, i.properties),
        }
        return formPage(signed, read.tenant, type, values, { edit: { integration: i, version: read.etag } })
      }),
  )

  const editSchema = { hide: true, params: IntegrationPath, body: IntegrationForm }
  router.post(route('/:integrationId/edit'), { schema: editSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params)
      const i = read.record
      const type = i.type as IntegrationType
      const version = request.body.version ?? ''
      const edit = { integration: i, version }
      const { formValues, properties, errors } = submitted(type, request.body)
      if (Object.keys(errors).length)
        return formPage(signed, read.tenant, type, formValues, { edit, errors, status: 400 })
      const base = `${listOf(read.tenant)}/${i.id}`
      await called(
        saveIntegration(signed, read, version, {
          name: formValues.name || type,
          description: formValues.description || null,
          active: formValues.active,
          properties,
        }),
        {
          changed: { what: 'integration', href: `${base}/edit` },
          errorsOf,
          form: (e, status) => formPage(signed, read.tenant, type, formValues, { edit, errors: e, status }),
        },
      )
      return { redirect: `${base}?done=saved` }
    }),
  )
}
