import { Type } from 'typebox'
import { html } from '../../../html.js'
import { Uuid } from '../../../http/schemas.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { Checkbox, Cursor, Done, Form, Query, RecordPath, TenantPath, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { activeToggleRoute, ifMatch } from '../kit/record-edits.js'
import { called } from '../kit/refusals.js'
import {
  readRecordFor,
  readTenantFor,
  type TenantOf,
  tenantCrumbs,
  tenantListRoute,
} from '../kit/tenant-scope.js'
import {
  alreadyShownBody,
  eventsOf,
  NOTICES,
  secretBody,
  valuesOf,
  type WebhookChanges,
  type WebhookFormValues,
  webhookBody,
  webhookForm,
  webhooksBody,
} from './webhooks.views.js'

/** A webhook as its pages read it: its tenant, the record and the record's ETag. */
type ReadWebhook = { tenant: { id: string }; record: { id: string } }

const WebhookPath = RecordPath('webhookId')
const DeliveryPath = Type.Object({ tenantId: Uuid(), webhookId: Uuid(), deliveryId: Uuid() })
/** The webhook form: the URL, the events (one per line or comma-separated), the sub-tenants box. */
const WebhookForm = Form({ url: Typed(), events: Typed(), includeSubTenants: Checkbox })

/**
 * A tenant's webhooks (docs/console-admin.md "Webhooks"): list, create and rotate (the secret on its one
 * page), edit, disable / re-enable, the delivery log, a test event and redelivery.
 */
export function webhookRoutes(router: TypedApp, pages: ConsolePages): void {
  const route = (path: string) => `/console/tenants/:tenantId/webhooks${path}`
  const crumbsOf = (tenant: TenantOf, ...rest: [string, string | undefined][]) =>
    tenantCrumbs(tenant, ['Webhooks', `/console/tenants/${tenant.id}/webhooks`], ...rest)

  /** The tenant and the webhook the path names, with its ETag; or the refusal page. */
  function load(signed: Signed, params: { tenantId: string; webhookId: string }) {
    return readRecordFor(signed, params.tenantId, params.webhookId, (tenantId, webhookId) =>
      signed.api.GET('/v1/tenants/{tenantId}/webhooks/{webhookId}', {
        params: { path: { tenantId, webhookId } },
      }),
    )
  }

  /** The webhook's PUT (edit, disable / re-enable): `changes` under If-Match with the version read. */
  function save(signed: Signed, read: ReadWebhook, version: string, changes: WebhookChanges) {
    return signed.api.PUT('/v1/tenants/{tenantId}/webhooks/{webhookId}', {
      params: { path: { tenantId: read.tenant.id, webhookId: read.record.id } },
      headers: ifMatch(version),
      body: changes,
    })
  }

  tenantListRoute(router, pages, route(''), 'Webhooks', {
    read: (signed, tenant) =>
      signed.api.GET('/v1/tenants/{tenantId}/webhooks', { params: { path: { tenantId: tenant.id } } }),
    body: (_, tenant, hooks) => webhooksBody({ tenant, hooks }),
  })

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
          title: title,
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

  router.get(route('/new'), { schema: { hide: true, params: TenantPath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readTenantFor(signed, request.params.tenantId)
      return formPage(signed, read.tenant, { url: 'https://', events: '*', includeSubTenants: false })
    }),
  )

  router.post(
    route(''),
    { schema: { hide: true, params: TenantPath, body: WebhookForm } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const read = await readTenantFor(signed, request.params.tenantId)
        const values = valuesOf(request.body)
        const { data, response } = await called(
          signed.api.POST('/v1/tenants/{tenantId}/webhooks', {
            params: { path: { tenantId: read.tenant.id } },
            headers: { 'idempotency-key': signed.formId },
            body: {
              url: values.url,
              events: eventsOf(values.events),
              includeSubTenants: values.includeSubTenants,
            },
          }),
          { form: (errors, status) => formPage(signed, read.tenant, values, undefined, errors, status) },
        )
        return secretPage(signed, read.tenant, data.result, response, false)
      }),
  )

  const pageSchema = { hide: true, params: WebhookPath, querystring: Query({ cursor: Cursor, done: Done }) }
  router.get(route('/:webhookId'), { schema: pageSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await load(signed, request.params)
      const query = request.query
      const cursor = query.cursor
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
            notice: NOTICES[query.done ?? ''],
          }),
        ),
      ]
    }),
  )

  router.get(route('/:webhookId/edit'), { schema: { hide: true, params: WebhookPath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await load(signed, request.params)
      const h = read.record
      const values = { url: h.url, events: h.events.join('\n'), includeSubTenants: h.includeSubTenants }
      return formPage(signed, read.tenant, values, { id: h.id, version: read.etag })
    }),
  )

  router.post(
    route('/:webhookId/edit'),
    { schema: { hide: true, params: WebhookPath, body: WebhookForm } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const read = await load(signed, request.params)
        const values = valuesOf(request.body)
        const version = request.body.version ?? ''
        const base = `/console/tenants/${read.tenant.id}/webhooks/${read.record.id}`
        const edit = { id: read.record.id, version }
        await called(
          save(signed, read, version, {
            url: values.url,
            events: eventsOf(values.events),
            includeSubTenants: values.includeSubTenants,
          }),
          {
            changed: { what: 'webhook', href: `${base}/edit` },
            form: (errors) => formPage(signed, read.tenant, values, edit, errors, 400),
            formCodes: [400],
          },
        )
        return { redirect: `${base}?done=saved` }
      }),
  )

  activeToggleRoute(router, pages, route('/:webhookId/active'), WebhookPath, {
    load,
    put: (signed, read, body) => save(signed, read, read.etag, body),
    page: ({ tenant, record }) => `/console/tenants/${tenant.id}/webhooks/${record.id}`,
    notices: ['enabled', 'disabled'],
  })

  router.post(
    route('/:webhookId/test'),
    { schema: { hide: true, params: WebhookPath, body: Form({}) } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { tenantId, webhookId } = request.params
        const { data } = await called(
          signed.api.POST('/v1/tenants/{tenantId}/webhooks/{webhookId}/test', {
            params: { path: { tenantId, webhookId } },
          }),
        )
        return {
          redirect: `/console/tenants/${tenantId}/webhooks/${webhookId}?done=test-${data.result.outcome === 'succeeded' ? 'ok' : 'failed'}`,
        }
      }),
  )

  const retrySchema = { hide: true, params: DeliveryPath, body: Form({}) }
  router.post(route('/:webhookId/deliveries/:deliveryId/retry'), { schema: retrySchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId, webhookId, deliveryId } = request.params
      const { data } = await called(
        signed.api.POST('/v1/tenants/{tenantId}/webhooks/{webhookId}/deliveries/{deliveryId}/retry', {
          params: { path: { tenantId, webhookId, deliveryId } },
        }),
      )
      return {
        redirect: `/console/tenants/${tenantId}/webhooks/${webhookId}?done=redelivered-${data.result.outcome === 'succeeded' ? 'ok' : 'failed'}`,
      }
    }),
  )

  router.post(
    route('/:webhookId/rotate-secret'),
    { schema: { hide: true, params: WebhookPath, body: Form({}) } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const read = await load(signed, request.params)
        const { data, response } = await called(
          signed.api.POST('/v1/tenants/{tenantId}/webhooks/{webhookId}/rotate-secret', {
            params: { path: { tenantId: read.tenant.id, webhookId: read.record.id } },
            headers: { 'idempotency-key': signed.formId },
          }),
        )
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
