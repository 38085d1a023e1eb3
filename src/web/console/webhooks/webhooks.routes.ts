import type { FastifyInstance } from 'fastify'
import { html } from '../../../html.js'
import { apiErrorOf } from '../api/client.js'
import { text } from '../kit/forms.js'
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
  UUID,
} from '../kit/tenant-scope.js'
import {
  alreadyShownBody,
  eventsOf,
  NOTICES,
  secretBody,
  valuesOf,
  type WebhookFormValues,
  webhookBody,
  webhookForm,
  webhooksBody,
} from './webhooks.views.js'

type Params = { tenantId: string; webhookId: string; deliveryId?: string }

/**
 * A tenant's webhooks (API.md §17 "Webhooks"): list, create and rotate (the secret on its one page),
 * edit, disable / re-enable, the delivery log, a test event and redelivery.
 */
export function webhookRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const route = (path: string) => `/console/tenants/:tenantId/webhooks${path}`
  const crumbsOf = (tenant: TenantOf, ...rest: [string, string | undefined][]) =>
    tenantCrumbs(tenant, ['Webhooks', `/console/tenants/${tenant.id}/webhooks`], ...rest)

  /** The tenant and the webhook the path names, with its ETag; or the refusal page. */
  function load(signed: Signed, params: Params) {
    return readRecordFor(
      signed,
      params.tenantId,
      params.webhookId,
      { code: 404, reason: 'webhook_not_found', message: 'No such webhook' },
      (tenantId, webhookId) =>
        signed.api.GET('/v1/tenants/{tenantId}/webhooks/{webhookId}', {
          params: { path: { tenantId, webhookId } },
        }),
    )
  }

  router.get(route(''), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const { data, error, response } = await signed.api.GET('/v1/tenants/{tenantId}/webhooks', {
        params: { path: { tenantId: read.tenant.id } },
      })
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      return tenantListPage(
        signed,
        read.tenant,
        'Webhooks',
        webhooksBody({ tenant: read.tenant, hooks: data.result }),
      )
    }),
  )

  function formPage(
    signed: Signed,
    tenant: TenantOf,
    values: WebhookFormValues,
    edit?: { id: string; version: string },
    errors?: Record<string, string>,
    status = 200,
  ): PageResult {
    const title = edit ? 'Edit webhook' : 'New webhook'
    const base = `/console/tenants/${tenant.id}/webhooks`
    return [
      status,
      signed.page(
        {
          title: errors ? `Error: ${title}` : title,
          area: 'tenants',
          crumbs: crumbsOf(tenant, [title, undefined]),
        },
        html`<h1>${title}</h1>${webhookForm({
          action: edit ? `${base}/${edit.id}/edit` : base,
          token: signed.form(),
          version: edit?.version,
          values,
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
      return formPage(signed, read.tenant, { url: 'https://', events: '*', includeSubTenants: false })
    }),
  )

  router.post(route(''), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, (request.params as Params).tenantId)
      if ('refused' in read) return read.refused
      const values = valuesOf(request.body as Record<string, unknown>)
      const { data, error, response } = await signed.api.POST('/v1/tenants/{tenantId}/webhooks', {
        params: { path: { tenantId: read.tenant.id } },
        headers: { 'idempotency-key': signed.formId },
        body: {
          url: values.url,
          events: eventsOf(values.events),
          includeSubTenants: values.includeSubTenants,
        },
      })
      if (data) return secretPage(signed, read.tenant, data.result, response, false)
      const refused = apiErrorOf(error, response.status)
      if (refused.code !== 400 && refused.code !== 409) return refusalPage(signed, refused)
      return formPage(signed, read.tenant, values, undefined, formErrorsOf(refused), refused.code)
    }),
  )

  router.get(route('/:webhookId'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await load(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const query = request.query as Record<string, unknown>
      const cursor = text(query.cursor)
      const deliveries = await signed.api.GET('/v1/tenants/{tenantId}/webhooks/{webhookId}/deliveries', {
        params: {
          path: { tenantId: read.tenant.id, webhookId: read.record.id },
          query: { limit: 25, ...(cursor ? { cursor } : {}) },
        },
      })
      return [
        200,
        signed.page(
          {
            title: `Webhook ${read.record.url}`,
            area: 'tenants',
            crumbs: crumbsOf(read.tenant, [read.record.url, undefined]),
          },
          webhookBody({
            tenant: read.tenant,
            hook: read.record,
            deliveries: deliveries.data?.result ?? [],
            nextCursor: deliveries.data?.nextCursor,
            form: signed.form,
            notice: NOTICES[text(query.done)],
          }),
        ),
      ]
    }),
  )

  router.get(route('/:webhookId/edit'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await load(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const h = read.record
      const values = { url: h.url, events: h.events.join('\n'), includeSubTenants: h.includeSubTenants }
      return formPage(signed, read.tenant, values, { id: h.id, version: read.etag })
    }),
  )

  router.post(route('/:webhookId/edit'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await load(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const form = request.body as Record<string, unknown>
      const values = valuesOf(form)
      const version = text(form.version)
      const base = `/console/tenants/${read.tenant.id}/webhooks/${read.record.id}`
      const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}/webhooks/{webhookId}', {
        params: { path: { tenantId: read.tenant.id, webhookId: read.record.id } },
        headers: { 'if-match': version || '"none"' },
        body: {
          url: values.url,
          events: eventsOf(values.events),
          includeSubTenants: values.includeSubTenants,
        },
      })
      if (data) return { redirect: `${base}?done=saved` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code === 412) return changedMeanwhilePage(signed, 'webhook', `${base}/edit`)
      if (refused.code !== 400) return refusalPage(signed, refused)
      return formPage(
        signed,
        read.tenant,
        values,
        { id: read.record.id, version },
        formErrorsOf(refused),
        400,
      )
    }),
  )

  router.post(route('/:webhookId/active'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await load(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const active = text((request.body as Record<string, unknown>).active) === 'true'
      const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}/webhooks/{webhookId}', {
        params: { path: { tenantId: read.tenant.id, webhookId: read.record.id } },
        headers: { 'if-match': read.etag || '"none"' },
        body: { active },
      })
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      return {
        redirect: `/console/tenants/${read.tenant.id}/webhooks/${read.record.id}?done=${active ? 'enabled' : 'disabled'}`,
      }
    }),
  )

  router.post(route('/:webhookId/test'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId, webhookId = '' } = request.params as Params
      if (!UUID.test(tenantId) || !UUID.test(webhookId))
        return refusalPage(signed, { code: 404, reason: 'webhook_not_found', message: 'No such webhook' })
      const { data, error, response } = await signed.api.POST(
        '/v1/tenants/{tenantId}/webhooks/{webhookId}/test',
        {
          params: { path: { tenantId, webhookId } },
        },
      )
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      return {
        redirect: `/console/tenants/${tenantId}/webhooks/${webhookId}?done=test-${data.result.outcome === 'succeeded' ? 'ok' : 'failed'}`,
      }
    }),
  )

  router.post(
    route('/:webhookId/deliveries/:deliveryId/retry'),
    { schema: { hide: true } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, webhookId = '', deliveryId = '' } = request.params as Params
        if (![tenantId, webhookId, deliveryId].every((id) => UUID.test(id)))
          return refusalPage(signed, {
            code: 404,
            reason: 'webhook_delivery_not_found',
            message: 'No such delivery',
          })
        const { data, error, response } = await signed.api.POST(
          '/v1/tenants/{tenantId}/webhooks/{webhookId}/deliveries/{deliveryId}/retry',
          { params: { path: { tenantId, webhookId, deliveryId } } },
        )
        if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
        return {
          redirect: `/console/tenants/${tenantId}/webhooks/${webhookId}?done=redelivered-${data.result.outcome === 'succeeded' ? 'ok' : 'failed'}`,
        }
      }),
  )

  router.post(route('/:webhookId/rotate-secret'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await load(signed, request.params as Params)
      if ('refused' in read) return read.refused
      const { data, error, response } = await signed.api.POST(
        '/v1/tenants/{tenantId}/webhooks/{webhookId}/rotate-secret',
        {
          params: { path: { tenantId: read.tenant.id, webhookId: read.record.id } },
          headers: { 'idempotency-key': signed.formId },
        },
      )
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      return secretPage(signed, read.tenant, data.result, response, true)
    }),
  )

  function secretPage(
    signed: Signed,
    tenant: TenantOf,
    hook: Parameters<typeof secretBody>[1],
    response: Response,
    rotated: boolean,
  ): PageResult {
    const crumbs = crumbsOf(
      tenant,
      [hook.url, `/console/tenants/${tenant.id}/webhooks/${hook.id}`],
      ['Secret', undefined],
    )
    // A replayed request (the form sent again, a reload) answers the stored secret: it is not shown twice.
    if (response.headers.get('idempotent-replayed') === 'true')
      return [
        200,
        signed.page({ title: 'Already done', area: 'tenants', crumbs }, alreadyShownBody(tenant.id, hook.id)),
      ]
    const title = rotated ? 'Signing secret rotated' : 'Webhook created'
    return [
      rotated ? 200 : 201,
      signed.page({ title, area: 'tenants', crumbs }, secretBody(tenant.id, hook, rotated)),
    ]
  }
}
