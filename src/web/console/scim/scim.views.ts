import type { paths } from '../../../../generated/openapi.js'
import { html } from '../../../html.js'
import { type Choice, type Errors, errorSummary, selectField, textField } from '../../kit/forms.js'
import type { ApiKey } from '../keys/keys.views.js'
import type { FormToken } from '../kit/form-token.js'
import { formTokenFields } from '../kit/forms.js'

export type ScimGroup =
  paths['/v1/tenants/{tenantId}/scim/groups']['get']['responses'][200]['content']['application/json']['result'][number]

/**
 * A tenant's SCIM settings (docs/scim.md): the base URL to give the directory, its tokens (created on the
 * API-key form, shown once there), the default role and the group → role mapping.
 */
export function scimBody(o: {
  tenant: { id: string; name: string }
  baseUrl: string
  defaultRoleId: string
  roles: Choice[]
  tokens: ApiKey[]
  groups: ScimGroup[]
  form: () => FormToken
  errors?: Errors | undefined
  saved?: string | undefined
}) {
  const t = o.tenant
  const unmapped: Choice = { value: '', text: 'Not mapped (the default role decides)' }
  return html`<h1>SCIM of ${t.name}</h1>
${o.saved ? html`<div class="notice success" role="status"><p>${o.saved}</p></div>` : ''}
${errorSummary(o.errors, { defaultRoleId: 'Default role' })}
<h2>Base URL</h2>
<p>Give the directory (Okta, Entra ID) this URL and a SCIM token.</p>
<p><code>${o.baseUrl}</code></p>
<h2>SCIM tokens</h2>
${
  o.tokens.length
    ? html`<ul>${o.tokens.map((k) => html`<li>${k.name} <span class="tag ${k.status}">${k.status}</span></li>`)}</ul>`
    : html`<p>No SCIM token yet.</p>`
}
<p><a class="button secondary" href="/console/tenants/${t.id}/api-keys/new?scope=scim">New SCIM token</a>
<a href="/console/tenants/${t.id}/api-keys">Disable a token on the API keys page</a></p>
<h2>Default role</h2>
<form method="post" action="/console/tenants/${t.id}/scim" novalidate>
${formTokenFields(o.form())}
${selectField({ name: 'defaultRoleId', label: 'Default role', value: o.defaultRoleId, errors: o.errors, choices: o.roles, hint: 'The role of a member the directory creates when no mapped group decides.' })}
<button type="submit">Save default role</button>
</form>
<h2>Groups and their roles</h2>
${
  o.groups.length === 0
    ? html`<p>The directory has pushed no groups yet.</p>`
    : html`${o.groups.map(
        (
          g,
        ) => html`<form method="post" action="/console/tenants/${t.id}/scim/groups/${g.id}" class="group" novalidate>
<h3>${g.displayName} <span class="muted">(${g.members} ${g.members === 1 ? 'member' : 'members'})</span></h3>
${formTokenFields(o.form())}<input type="hidden" name="updated" value="${g.updated}">
${selectField({ name: `role-${g.id}`, label: `Role of ${g.displayName}`, value: g.roleId ?? '', choices: [unmapped, ...o.roles] })}
${textField({ name: `priority-${g.id}`, label: `Priority of ${g.displayName}`, value: String(g.priority), hint: 'The lowest number wins when a member is in several mapped groups.' })}
<button type="submit">Save ${g.displayName}</button>
</form>`,
      )}`
}`
}
