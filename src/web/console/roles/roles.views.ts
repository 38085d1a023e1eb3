import type { paths } from '../../../../generated/openapi.js'
import { html } from '../../../html.js'
import { checkbox, type Errors, errorSummary, textArea, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { formTokenFields } from '../kit/forms.js'

export type Role =
  paths['/v1/tenants/{tenantId}/roles/{roleId}']['get']['responses'][200]['content']['application/json']['result']
export interface Permission {
  id: string
  name: string
  description: string
}

export const ROLE_LABELS = { name: 'Name', description: 'Description', permissions: 'Permissions' }

export interface RoleFormValues {
  name: string
  description: string
  permissions: string[]
  active: boolean
  shared: boolean
}

export function rolesBody(o: { tenant: { id: string; name: string }; roles: Role[]; mayManage: boolean }) {
  const t = o.tenant
  return html`<h1>Roles of ${t.name}</h1>
${o.mayManage ? html`<p><a class="button" href="/console/tenants/${t.id}/roles/new">New role</a></p>` : ''}
${table(
  'Roles',
  ['Name', 'Description', 'Permissions', 'State', { label: 'History', hidden: true }],
  o.roles,
  (r) => [
    r.builtIn || !o.mayManage
      ? r.name
      : html`<a href="/console/tenants/${t.id}/roles/${r.id}/edit">${r.name}</a>`,
    r.description || '—',
    r.permissions.length,
    `${r.builtIn ? 'Built-in (read-only)' : r.active ? 'Active' : 'Disabled'}${r.shared ? ', shared with sub-tenants' : ''}`,
    // Built-in roles never change: only a tenant's own roles have a history.
    r.builtIn
      ? ''
      : html`<a href="/console/tenants/${t.id}/history?targetId=${r.id}">History<span class="skip"> of ${r.name}</span></a>`,
  ],
)}`
}

/**
 * The role form: a check-box per permission; one the person does not hold in the tenant is disabled,
 * with the reason beside it, before they try (the API would refuse it: the role ceiling).
 */
export function roleForm(o: {
  action: string
  token: FormToken
  version?: string | undefined
  values: RoleFormValues
  catalogue: Permission[]
  mine: Set<string>
  errors?: Errors | undefined
  editing: boolean
}) {
  const v = o.values
  const error = o.errors?.permissions
  return html`${errorSummary(o.errors, ROLE_LABELS)}
<form method="post" action="${o.action}" novalidate>
${formTokenFields(o.token, o.version)}
${textField({ name: 'name', label: 'Name', value: v.name, errors: o.errors })}
${textArea({ name: 'description', label: 'Description', value: v.description, errors: o.errors, rows: 2 })}
<fieldset id="permissions" class="field${error ? ' invalid' : ''}"${error ? html` aria-describedby="permissions-error"` : ''}>
<legend>Permissions</legend>
${error ? html`<p class="error-message" id="permissions-error"><span class="skip">Error:</span> Permissions ${error}</p>` : ''}
${o.catalogue.map((p) => {
  const held = o.mine.has(p.name)
  const id = `permission-${p.name}`
  return html`<div class="check">
<input type="checkbox" id="${id}" name="permissions" value="${p.name}"${v.permissions.includes(p.name) ? html` checked` : ''}${
    held ? '' : html` disabled`
  } aria-describedby="${id}-hint">
<label for="${id}">${p.name}</label></div>
<p class="hint" id="${id}-hint">${p.description}${held ? '' : ' — you cannot grant it: you do not hold it in this tenant.'}</p>`
})}
</fieldset>
${checkbox({ name: 'active', label: 'Active', checked: v.active, hint: 'A disabled role grants nothing and cannot be assigned' })}
${checkbox({ name: 'shared', label: 'Shared with sub-tenants', checked: v.shared, hint: "Assignable in this tenant's sub-tenants too" })}
<button type="submit">${o.editing ? 'Save changes' : 'Create role'}</button>
</form>`
}
