import type { paths } from '../../../../generated/openapi.js'
import { html } from '../../../html.js'
import {
  INTEGRATION_TYPES,
  type IntegrationType,
  PROPERTY_SPECS,
} from '../../../modules/integrations/integration-types.js'
import { checkbox, type Errors, errorSummary, selectField, textArea, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { actionButton, formTokenFields } from '../kit/forms.js'
import { type FieldValues, labelOf, propertyFields, propertyLabels, typeLabel } from './integration-fields.js'

type Path = '/v1/tenants/{tenantId}/integrations/{integrationId}'
export type Integration = paths[Path]['get']['responses'][200]['content']['application/json']['result']
export type IntegrationChanges = NonNullable<paths[Path]['put']['requestBody']>['content']['application/json']

export interface IntegrationFormValues {
  name: string
  description: string
  active: boolean
  properties: FieldValues
}

type Tenant = { id: string; name: string }

function state(active: boolean) {
  return active ? html`<span class="tag enabled">active</span>` : html`<span class="tag">inactive</span>`
}

export function integrationsBody(o: {
  tenant: Tenant
  integrations: Integration[]
  notice?: string | undefined
}) {
  const t = o.tenant
  return html`<h1>Integrations of ${t.name}</h1>
${o.notice ? html`<div class="notice" role="status"><p>${o.notice}</p></div>` : ''}
<p><a class="button" href="/console/tenants/${t.id}/integrations/new">New integration</a></p>
${
  o.integrations.length === 0
    ? html`<p>${t.name} has no integrations.</p>`
    : table('Integrations', ['Name', 'Type', 'State'], o.integrations, (i) => [
        html`<a href="/console/tenants/${t.id}/integrations/${i.id}">${i.name}</a>`,
        typeLabel(i.type),
        state(i.active),
      ])
}`
}

/** The first step of "New integration": which type (a GET form, so it works without a script). */
export function chooseTypeBody(tenant: Tenant) {
  return html`<h1>New integration</h1>
<form method="get" action="/console/tenants/${tenant.id}/integrations/new">
${selectField({
  name: 'type',
  label: 'Type',
  hint: 'Each type has its own fields: they are on the next page.',
  choices: INTEGRATION_TYPES.map((type) => ({ value: type, text: typeLabel(type) })),
})}
<button type="submit">Continue</button>
</form>`
}

export function integrationForm(o: {
  action: string
  token: FormToken
  version?: string | undefined
  type: IntegrationType
  values: IntegrationFormValues
  secretsSet: Set<string>
  errors?: Errors | undefined
  editing: boolean
}) {
  const v = o.values
  const labels = { name: 'Name', description: 'Description', active: 'Active', ...propertyLabels(o.type) }
  return html`${errorSummary(o.errors, labels)}
<form method="post" action="${o.action}" novalidate>
${formTokenFields(o.token, o.version)}
<input type="hidden" name="type" value="${o.type}">
<p><strong>Type:</strong> ${typeLabel(o.type)}</p>
${textField({ name: 'name', label: 'Name', value: v.name, errors: o.errors, hint: `Unique in the tenant. Left empty: ${o.type}` })}
${textArea({ name: 'description', label: 'Description', value: v.description, errors: o.errors, rows: 2 })}
<fieldset><legend>${typeLabel(o.type)} settings</legend>
${propertyFields(o.type, v.properties, o.secretsSet, o.errors)}
</fieldset>
${activeField(v.active, o.errors)}
<button type="submit">${o.editing ? 'Save changes' : 'Create integration'}</button>
</form>`
}

/** "Active", with the refusal beside it naming what an active integration still lacks. */
function activeField(active: boolean, errors: Errors | undefined) {
  return checkbox({
    name: 'active',
    label: 'Active',
    checked: active,
    hint: 'An active integration needs every setting marked "Needed to activate".',
    errors,
  })
}

export function integrationBody(o: {
  tenant: Tenant
  integration: Integration
  form: () => FormToken
  notice?: string | undefined
  problem?: string | undefined
}) {
  const i = o.integration
  const type = i.type as IntegrationType
  const base = `/console/tenants/${o.tenant.id}/integrations/${i.id}`
  return html`<h1>${i.name}</h1>
${o.notice ? html`<div class="notice" role="status"><p>${o.notice}</p></div>` : ''}
${o.problem ? html`<div class="notice warning" role="alert"><p>${o.problem}</p></div>` : ''}
<dl class="summary">
<dt>Type</dt><dd>${typeLabel(i.type)}</dd>
<dt>Description</dt><dd>${i.description || '—'}</dd>
<dt>State</dt><dd>${state(i.active)}</dd>
${Object.entries(PROPERTY_SPECS[type]).map(([key, spec]) => {
  const value = i.properties[key]
  const shown =
    spec.kind === 'secret'
      ? value
        ? 'set'
        : 'not set'
      : typeof value === 'boolean'
        ? value
          ? 'Yes'
          : 'No'
        : typeof value === 'object'
          ? JSON.stringify(value)
          : value || '—'
  return html`<dt>${labelOf(key)}</dt><dd>${shown}</dd>`
})}
</dl>
<div class="actions">
<a class="button secondary" href="${base}/edit">Edit integration</a>
${
  i.active
    ? actionButton(`${base}/active`, 'Deactivate integration', o.form(), { active: 'false' })
    : actionButton(`${base}/active`, 'Activate integration', o.form(), { active: 'true' })
}
<a class="button warning" href="${base}/delete">Delete integration</a>
<a href="/console/tenants/${o.tenant.id}/history?targetId=${i.id}">History</a>
</div>`
}

export function deleteBody(o: { tenant: Tenant; integration: Integration; token: FormToken }) {
  const base = `/console/tenants/${o.tenant.id}/integrations/${o.integration.id}`
  return html`<h1>Delete ${o.integration.name}?</h1>
<div class="notice warning"><p>The integration and its stored secrets are deleted for good. This cannot be undone.</p></div>
<form method="post" action="${base}/delete">${formTokenFields(o.token)}
<div class="actions"><button type="submit" class="warning">Delete integration</button>
<a href="${base}">Cancel</a></div></form>`
}

export const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  activated: 'The integration is active.',
  deactivated: 'The integration is inactive.',
  deleted: 'The integration was deleted.',
}
