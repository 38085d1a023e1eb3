import type { FastifyInstance } from 'fastify'
import { html } from '../../../html.js'
import { type IntegrationType, normalizeType } from '../../../modules/integrations/integration-types.js'
import { type ApiError, apiErrorOf } from '../api/client.js'
import type { Errors } from '../kit/forms.js'
import { text } from '../kit/forms.js'
import {
  type ConsolePages,
  changedMeanwhilePage,
  type PageResult,
  refusalPage,
  type Signed,
} from '../kit/pages.js'
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
  type IntegrationParams,
  integrationRecordRoutes,
  listOf,
  loadIntegration,
} from './integration-record.routes.js'
import {
  chooseTypeBody,
  type Integration,
  type IntegrationFormValues,
  integrationForm,
  integrationsBody,
  NOTICES,
} from './integrations.views.js'

type Params = IntegrationParams

/**
 * A tenant's integrations (API.md §17 "Integrations"): list, create and edit by type with the type's own
 * fields (integration-fields.ts derives them from the API's declaration), secrets write-only,
 * activation naming what is missing, and delete after a confirmation.
 */
export function integrationRoutes(router: FastifyInstance, pages: ConsolePages): void {
  integrationRecordRoutes(router, pages)
  const route = (path: string) => `/console/tenants/:tenantId/integrations${path}`

  router.get(route(''), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/integrations', {
        params: { path: { tenantId: read.tenant.id }, query: { limit: 100 } },
      })
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      const notice = NOTICES[text((request.query as Record<string, unknown>).done)]
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
          title: errors ? `Error: ${title}` : title,
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

  router.get(route('/new'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const type = normalizeType((request.query as Record<string, unknown>).type)
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
  function submitted(type: IntegrationType, form: Record<string, unknown>) {
    const { properties, values, errors } = propertiesOf(type, form)
    const formValues: IntegrationFormValues = {
      name: text(form.name).trim(),
      description: text(form.description).trim(),
      active: form.active === 'on',
      properties: values,
    }
    return { formValues, properties, errors }
  }

  /** A refused write: its field errors on the form (400, 409), the changed-meanwhile page, or a refusal. */
  function refusedForm(
    signed: Signed,
    refused: ApiError,
    redraw: (errors: Errors, status: number) => PageResult,
  ) {
    if (refused.code !== 400 && refused.code !== 409) return refusalPage(signed, refused)
    const errors = refused.attribute ? integrationErrorsOf(refused.attribute) : {}
    if (refused.reason === 'integration_name_taken')
      errors.name = 'is taken by another integration of this tenant'
    if (Object.keys(errors).length === 0) errors._ = refused.message
    return redraw(errors, refused.code)
  }

  router.post(route(''), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const form = request.body as Record<string, unknown>
      const type = normalizeType(form.type)
      if (!type) return { redirect: `${listOf(read.tenant)}/new` }
      const { formValues, properties, errors } = submitted(type, form)
      if (Object.keys(errors).length)
        return formPage(signed, read.tenant, type, formValues, { errors, status: 400 })
      const { data, error, response } = await signed.api.POST('/v1/tenants/{tenantId}/integrations', {
        params: { path: { tenantId: read.tenant.id } },
        headers: { 'idempotency-key': signed.formId },
        body: {
          type,
          ...(formValues.name ? { name: formValues.name } : {}),
          description: formValues.description || null,
          active: formValues.active,
          properties,
        },
      })
      if (data) return { redirect: `${listOf(read.tenant)}/${data.result.id}?done=saved` }
      return refusedForm(signed, apiErrorOf(error, response.status), (e, status) =>
        formPage(signed, read.tenant, type, formValues, { errors: e, status }),
      )
    }),
  )
  router.get(route('/:integrationId/edit'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params as Params)
      if ('refused' in read) return read.refused
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

  router.post(route('/:integrationId/edit'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadIntegration(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const i = read.record
      const type = i.type as IntegrationType
      const form = request.body as Record<string, unknown>
      const version = text(form.version)
      const edit = { integration: i, version }
      const { formValues, properties, errors } = submitted(type, form)
      if (Object.keys(errors).length)
        return formPage(signed, read.tenant, type, formValues, { edit, errors, status: 400 })
      const base = `${listOf(read.tenant)}/${i.id}`
      const { data, error, response } = await signed.api.PUT(
        '/v1/tenants/{tenantId}/integrations/{integrationId}',
        {
          params: { path: { tenantId: read.tenant.id, integrationId: i.id } },
          headers: { 'if-match': version || '"none"' },
          body: {
            name: formValues.name || type,
            description: formValues.description || null,
            active: formValues.active,
            properties,
          },
        },
      )
      if (data) return { redirect: `${base}?done=saved` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code === 412) return changedMeanwhilePage(signed, 'integration', `${base}/edit`)
      return refusedForm(signed, refused, (e, status) =>
        formPage(signed, read.tenant, type, formValues, { edit, errors: e, status }),
      )
    }),
  )
}
