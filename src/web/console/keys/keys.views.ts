import type { paths } from '../../../../generated/openapi.js'
import { html } from '../../../html.js'
import { type Choice, type Errors, errorSummary, selectField, textArea, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { actionButton, formTokenFields } from '../kit/forms.js'

export type ApiKey =
  paths['/v1/tenants/{tenantId}/api-keys']['get']['responses'][200]['content']['application/json']['result'][number]
export type NewApiKey =
  paths['/v1/tenants/{tenantId}/api-keys']['post']['responses'][201]['content']['application/json']['result']

export const KEY_LABELS = { name: 'Name', description: 'Description', roleId: 'Role', scope: 'Kind' }

export const SCOPE_WORDS: Record<string, string> = { api: 'API key', scim: 'SCIM token' }

export interface KeyFormValues {
  name: string
  description: string
  roleId: string
  scope: string
}

/** The keys of a tenant: never a secret, only what each key is and a button to disable or enable it. */
export function keysBody(o: {
  tenantId: string
  tenantName: string
  keys: ApiKey[]
  roleNames: Map<string, string>
  form: () => FormToken
}) {
  return html`<h1>API keys of ${o.tenantName}</h1>
<p>A key's secret (or a SCIM token) is shown once, when it is created; it cannot be shown again.</p>
<p><a class="button" href="/console/tenants/${o.tenantId}/api-keys/new">New API key</a></p>
${
  o.keys.length === 0
    ? html`<p>${o.tenantName} has no API keys.</p>`
    : table(
        'API keys',
        ['Name', 'Kind', 'Role', 'Status', 'Key ID', { label: 'Actions', hidden: true }],
        o.keys,
        (key) => [
          html`${key.name}${key.description ? html`<br><span class="muted">${key.description}</span>` : ''}`,
          SCOPE_WORDS[key.scope] ?? key.scope,
          o.roleNames.get(key.roleId) ?? key.roleId,
          html`<span class="tag ${key.status}">${key.status}</span>`,
          html`<code>${key.id}</code>`,
          html`<a href="/console/tenants/${o.tenantId}/history?targetId=${key.id}">History<span class="skip"> of ${key.name}</span></a>
${actionButton(
  `/console/tenants/${o.tenantId}/api-keys/${key.id}/status`,
  key.status === 'enabled' ? `Disable ${key.name}` : `Enable ${key.name}`,
  o.form(),
  { status: key.status === 'enabled' ? 'disabled' : 'enabled', updated: key.updated },
  key.status === 'enabled' ? 'warning' : 'secondary',
)}`,
        ],
      )
}`
}

export function keyForm(o: {
  tenantId: string
  token: FormToken
  values: KeyFormValues
  roles: Choice[]
  errors?: Errors | undefined
}) {
  const v = o.values
  return html`${errorSummary(o.errors, KEY_LABELS)}
<form method="post" action="/console/tenants/${o.tenantId}/api-keys" novalidate>
${formTokenFields(o.token)}
${textField({ name: 'name', label: 'Name', value: v.name, errors: o.errors, hint: 'What uses the key, for example "CRM sync"' })}
${textArea({ name: 'description', label: 'Description', value: v.description, errors: o.errors, rows: 2 })}
${selectField({
  name: 'scope',
  label: 'Kind',
  value: v.scope,
  errors: o.errors,
  hint: 'An API key calls /v1; a SCIM token lets a directory (Okta, Entra ID) provision members.',
  choices: Object.entries(SCOPE_WORDS).map(([value, text]) => ({ value, text })),
})}
${selectField({ name: 'roleId', label: 'Role', value: v.roleId, errors: o.errors, choices: o.roles, hint: 'The key acts with this role in the tenant and its sub-tenants.' })}
<button type="submit">Create API key</button>
</form>`
}

/** The one page that holds a new key's secret or token (never cached; a reload does not show it again). */
export function shownOnceBody(tenantId: string, key: NewApiKey) {
  const scim = key.scope === 'scim'
  return html`<h1>${scim ? 'SCIM token' : 'API key'} created</h1>
<div class="notice success" role="status"><p>Copy it now: it is shown only on this page, once. Tenantry keeps
only its hash and cannot show it again.</p></div>
<dl class="summary">
<dt>Name</dt><dd>${key.name}</dd>
<dt>Key ID</dt><dd><code>${key.id}</code></dd>
${
  scim
    ? html`<dt>SCIM token</dt><dd><code data-secret>${key.token ?? ''}</code></dd>`
    : html`<dt>Secret</dt><dd><code data-secret>${key.secret ?? ''}</code></dd>
<dt>How to use it</dt><dd>HTTP Basic with the key ID as user name and the secret as password, or POST /v1/tokens.</dd>`
}
</dl>
<p><a href="/console/tenants/${tenantId}/${scim ? 'scim' : 'api-keys'}">Done: back to the ${scim ? 'SCIM settings' : 'API keys'}</a></p>`
}

/** A repeated submit of the create form: the key exists, and its secret is not shown a second time. */
export function alreadyShownBody(tenantId: string, key: NewApiKey) {
  return html`<h1>This key was already created</h1>
<div class="notice" role="status"><p>The form was sent again. The key "${key.name}" exists; its secret was
shown once when it was created and is not shown again. If it was not copied, disable the key and create a new one.</p></div>
<p><a href="/console/tenants/${tenantId}/api-keys">Back to the API keys</a></p>`
}
