import type { paths } from '../../../../generated/openapi.js'
import { html } from '../../../html.js'
import { checkbox, type Errors, errorSummary, textArea, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { actionButton, formTokenFields, text } from '../kit/forms.js'

type Path = '/v1/tenants/{tenantId}/webhooks/{webhookId}'
export type Webhook = paths[Path]['get']['responses'][200]['content']['application/json']['result']
export type WebhookChanges = NonNullable<paths[Path]['put']['requestBody']>['content']['application/json']
export type Delivery =
  paths[`${Path}/deliveries`]['get']['responses'][200]['content']['application/json']['result'][number]
export type NewWebhook =
  paths[`${Path}/rotate-secret`]['post']['responses'][200]['content']['application/json']['result']

export const WEBHOOK_LABELS = { url: 'URL', events: 'Events', includeSubTenants: 'Include sub-tenants' }

export interface WebhookFormValues {
  url: string
  events: string
  includeSubTenants: boolean
}

function state(hook: Webhook) {
  if (!hook.active)
    return html`<span class="tag failed">disabled</span>${hook.disabledReason ? html` ${hook.disabledReason}` : ''}`
  return hook.failingSince
    ? html`<span class="tag failed">failing</span> since ${hook.failingSince}`
    : html`<span class="tag enabled">active</span>`
}

export function webhooksBody(o: { tenant: { id: string; name: string }; hooks: Webhook[] }) {
  const t = o.tenant
  return html`<h1>Webhooks of ${t.name}</h1>
<p><a class="button" href="/console/tenants/${t.id}/webhooks/new">New webhook</a></p>
${
  o.hooks.length === 0
    ? html`<p>${t.name} has no webhooks.</p>`
    : table('Webhooks', ['URL', 'Events', 'State'], o.hooks, (h) => [
        html`<a href="/console/tenants/${t.id}/webhooks/${h.id}">${h.url}</a>`,
        h.events.join(', '),
        state(h),
      ])
}`
}

export function webhookForm(o: {
  action: string
  token: FormToken
  version?: string | undefined
  values: WebhookFormValues
  errors?: Errors | undefined
  editing: boolean
}) {
  const v = o.values
  return html`${errorSummary(o.errors, WEBHOOK_LABELS)}
<form method="post" action="${o.action}" novalidate>
${formTokenFields(o.token, o.version)}
${textField({ name: 'url', label: 'URL', value: v.url, errors: o.errors, hint: 'The https address the events are sent to' })}
${textArea({ name: 'events', label: 'Events', value: v.events, errors: o.errors, rows: 3, hint: 'One per line or comma-separated: an action ("membership.removed"), a family ("membership.*") or "*" for all' })}
${checkbox({ name: 'includeSubTenants', label: 'Include sub-tenants', checked: v.includeSubTenants, hint: "Also send the events of this tenant's sub-tenants" })}
<button type="submit">${o.editing ? 'Save changes' : 'Create webhook'}</button>
</form>`
}

/** The page of a new or rotated signing secret: the only page it is ever in. */
export function secretBody(tenantId: string, hook: NewWebhook, rotated: boolean) {
  return html`<h1>${rotated ? 'Signing secret rotated' : 'Webhook created'}</h1>
<div class="notice success" role="status"><p>Copy the signing secret now: it is shown only on this page, once.${
    rotated
      ? ' The old secret keeps verifying for 24 hours: every delivery until then carries both signatures.'
      : ''
  }</p></div>
<dl class="summary">
<dt>URL</dt><dd>${hook.url}</dd>
<dt>Signing secret</dt><dd><code data-secret>${hook.secret}</code></dd>
${hook.previousSecretExpires ? html`<dt>Old secret verifies until</dt><dd>${hook.previousSecretExpires}</dd>` : ''}
</dl>
<p><a href="/console/tenants/${tenantId}/webhooks/${hook.id}">Done: back to the webhook</a></p>`
}

export function alreadyShownBody(tenantId: string, hookId: string) {
  return html`<h1>Already done</h1>
<div class="notice" role="status"><p>The form was sent again. It was done once; the signing secret was shown
then and is not shown again. If it was not copied, rotate the secret.</p></div>
<p><a href="/console/tenants/${tenantId}/webhooks/${hookId}">Back to the webhook</a></p>`
}

export function webhookBody(o: {
  tenant: { id: string; name: string }
  hook: Webhook
  deliveries: Delivery[]
  nextCursor?: string | undefined
  form: () => FormToken
  notice?: string | undefined
}) {
  const { hook } = o
  const base = `/console/tenants/${o.tenant.id}/webhooks/${hook.id}`
  return html`<h1>Webhook ${hook.url}</h1>
${o.notice ? html`<div class="notice" role="status"><p>${o.notice}</p></div>` : ''}
<dl class="summary">
<dt>URL</dt><dd>${hook.url}</dd>
<dt>Events</dt><dd>${hook.events.join(', ')}</dd>
<dt>Sub-tenants</dt><dd>${hook.includeSubTenants ? 'Included' : 'Not included'}</dd>
<dt>State</dt><dd>${state(hook)}</dd>
${hook.previousSecretExpires ? html`<dt>Old secret verifies until</dt><dd>${hook.previousSecretExpires}</dd>` : ''}
</dl>
<div class="actions">
<a class="button secondary" href="${base}/edit">Edit webhook</a>
<a href="/console/tenants/${o.tenant.id}/history?targetId=${hook.id}">History</a>
${actionButton(`${base}/test`, 'Send test event', o.form())}
${actionButton(`${base}/rotate-secret`, 'Rotate secret', o.form())}
${
  hook.active
    ? actionButton(`${base}/active`, 'Disable webhook', o.form(), { active: 'false' }, 'warning')
    : actionButton(`${base}/active`, 'Re-enable webhook', o.form(), { active: 'true' })
}
</div>
<h2>Delivery log</h2>
${
  o.deliveries.length === 0
    ? html`<p>Nothing has been sent yet.</p>`
    : table(
        'Delivery attempts, newest first',
        ['When', 'Event', 'Attempt', 'Outcome', 'Message ID', { label: 'Actions', hidden: true }],
        o.deliveries,
        (d) => [
          d.attemptedAt,
          d.action,
          d.attempt,
          html`<span class="tag ${d.outcome === 'succeeded' ? 'sent' : 'failed'}">${d.outcome}</span>${
            d.responseStatus !== null ? html` HTTP ${d.responseStatus}` : ''
          }${d.error ? html` ${d.error}` : ''} (${d.durationMs} ms)`,
          html`<code>${d.messageId}</code>`,
          actionButton(
            `${base}/deliveries/${d.id}/retry`,
            `Redeliver attempt ${d.attempt} of ${d.action}`,
            o.form(),
          ),
        ],
      )
}
${o.nextCursor ? html`<p><a href="${base}?cursor=${o.nextCursor}">Older attempts</a></p>` : ''}`
}

export const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  enabled: 'The webhook is enabled again.',
  disabled: 'The webhook is disabled: nothing is sent to it.',
  'test-ok': 'The test event was delivered: see the delivery log.',
  'test-failed': 'The test event was not accepted: see the delivery log for why.',
  'redelivered-ok': 'Redelivered, under the same message ID.',
  'redelivered-failed': 'The redelivery was not accepted: see the delivery log for why.',
}

export function valuesOf(form: Record<string, unknown>): WebhookFormValues {
  return {
    url: text(form.url).trim(),
    events: text(form.events).trim(),
    includeSubTenants: form.includeSubTenants === 'on',
  }
}

export function eventsOf(events: string): string[] {
  return events
    .split(/[\s,]+/)
    .map((e) => e.trim())
    .filter(Boolean)
}
