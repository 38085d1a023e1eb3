import type { paths } from '../../../../generated/openapi.js'
import { html, type SafeHtml } from '../../../html.js'
import { checkbox, type Errors, errorSummary, selectField, textArea, textField } from '../../kit/forms.js'
import type { FormToken } from '../kit/form-token.js'
import { formTokenFields } from '../kit/forms.js'

export type Tenant =
  paths['/v1/tenants/{tenantId}']['get']['responses'][200]['content']['application/json']['result']

/** A node of the drawn tree: the tenant, and its children when the node is open. */
export interface TreeNode {
  tenant: Pick<Tenant, 'id' | 'name' | 'active' | 'childIds'>
  children?: TreeNode[] | undefined
  /** More children than drawn: the tenant's page lists them all. */
  more?: boolean
}

/** `?open=` after toggling one node: the links of the tree carry which nodes are open. */
function toggled(open: string[], id: string): string {
  const next = open.includes(id) ? open.filter((x) => x !== id) : [...open, id]
  return next.length ? `/console/tenants?open=${next.join(',')}#t-${id}` : `/console/tenants#t-${id}`
}

function drawNodes(nodes: TreeNode[], open: string[]): SafeHtml {
  return html`${nodes.map(({ tenant, children, more }) => {
    const count = tenant.childIds.length
    const isOpen = children !== undefined
    const disclosure =
      count === 0
        ? ''
        : html`<a class="disclosure" href="${toggled(open, tenant.id)}" aria-expanded="${isOpen ? 'true' : 'false'}">${
            isOpen ? 'Hide' : 'Show'
          } ${count === 1 ? 'the sub-tenant' : `${count} sub-tenants`}<span class="skip"> of ${tenant.name}</span></a>`
    return html`<li id="t-${tenant.id}"><div class="node"><a href="/console/tenants/${tenant.id}">${tenant.name}</a>${
      tenant.active ? '' : html` <span class="tag">inactive</span>`
    } ${disclosure}</div>${
      isOpen
        ? html`<ul>${drawNodes(children, open)}${
            more
              ? html`<li><a href="/console/tenants/${tenant.id}#sub-tenants">All sub-tenants of ${tenant.name}</a></li>`
              : ''
          }</ul>`
        : ''
    }</li>`
  })}`
}

export function treeBody(o: {
  roots: TreeNode[]
  open: string[]
  nextCursor?: string | undefined
  mayCreateRoot: boolean
}) {
  return html`<h1>Tenants</h1>
${o.mayCreateRoot ? html`<p><a class="button" href="/console/tenants/new">New tenant</a></p>` : ''}
${
  o.roots.length === 0
    ? html`<p>There are no tenants you can see yet.</p>`
    : html`<ul class="tree" aria-label="Tenant tree">${drawNodes(o.roots, o.open)}</ul>`
}
${o.nextCursor ? html`<p><a href="/console/tenants?cursor=${o.nextCursor}">More tenants</a></p>` : ''}`
}

export function tenantBody(o: {
  tenant: Tenant
  region: string
  children: TreeNode[]
  more: boolean
  canEdit: boolean
  canManageMembers: boolean
}) {
  const t = o.tenant
  const parentLink =
    t.parentIds.length > 1
      ? html`<a href="/console/tenants/${t.parent.id}">${t.parent.name}</a>`
      : html`None (a root tenant)`
  return html`<h1>${t.name}</h1>
<dl class="summary">
<dt>Description</dt><dd>${t.description || '—'}</dd>
<dt>Parent</dt><dd>${parentLink}</dd>
<dt>Region</dt><dd>${o.region}</dd>
<dt>Timezone</dt><dd>${t.timezone}</dd>
<dt>Active</dt><dd>${t.active ? 'Yes' : 'No'}</dd>
<dt>Password sign-in</dt><dd>${PASSWORD_POLICY[t.cxengageIdentityProvider as keyof typeof PASSWORD_POLICY] ?? t.cxengageIdentityProvider}</dd>
</dl>
<h2>Belongs to this tenant</h2>
<ul class="links">
<li><a href="/console/tenants/${t.id}/members">Members</a></li>
<li><a href="/console/tenants/${t.id}/roles">Roles</a></li>
<li><a href="/console/tenants/${t.id}/integrations">Integrations</a></li>
<li><a href="/console/tenants/${t.id}/identity-providers">Identity providers</a></li>
<li><a href="/console/tenants/${t.id}/password-policy">Password policy</a></li>
<li><a href="/console/tenants/${t.id}/security">Security settings</a></li>
<li><a href="/console/tenants/${t.id}/webhooks">Webhooks</a></li>
<li><a href="/console/tenants/${t.id}/api-keys">API keys</a></li>
<li><a href="/console/tenants/${t.id}/scim">SCIM</a></li>
<li><a href="/console/tenants/${t.id}/history">History</a></li>
</ul>
<div class="actions">
${o.canEdit ? html`<a class="button secondary" href="/console/tenants/${t.id}/edit">Edit tenant</a>` : ''}
${o.canEdit ? html`<a class="button secondary" href="/console/tenants/new?parentId=${t.id}">New sub-tenant</a>` : ''}
</div>
<h2 id="sub-tenants">Sub-tenants</h2>
${
  o.children.length
    ? html`<ul class="tree">${drawNodes(o.children, [])}</ul>`
    : html`<p>${t.name} has no sub-tenants.</p>`
}`
}

export const PASSWORD_POLICY = {
  enabled: 'Allowed',
  disabled: 'Not allowed (identity providers only)',
  denied: 'Denied',
} as const

export const TENANT_LABELS = {
  name: 'Name',
  description: 'Description',
  regionId: 'Region',
  timezone: 'Timezone',
  administrator: 'Administrator',
  cxengageIdentityProvider: 'Password sign-in',
  active: 'Active',
}

export interface TenantFormValues {
  name: string
  description: string
  regionId: string
  timezone: string
  active: boolean
  administrator: string
  cxengageIdentityProvider: string
}

export function tenantForm(o: {
  action: string
  token: FormToken
  version?: string | undefined
  values: TenantFormValues
  errors?: Errors | undefined
  regions: { id: string; name: string }[]
  parent?: { id: string; name: string } | undefined
  editing: boolean
}) {
  const v = o.values
  return html`${errorSummary(o.errors, TENANT_LABELS)}
<form method="post" action="${o.action}" novalidate>
${formTokenFields(o.token, o.version)}
${o.parent ? html`<input type="hidden" name="parentId" value="${o.parent.id}"><p><strong>Parent:</strong> ${o.parent.name}</p>` : ''}
${textField({ name: 'name', label: 'Name', value: v.name, errors: o.errors, hint: 'Unique across all tenants' })}
${textArea({ name: 'description', label: 'Description', value: v.description, errors: o.errors, rows: 3 })}
${
  o.editing
    ? html`<p><strong>Region:</strong> ${o.regions.find((r) => r.id === v.regionId)?.name ?? v.regionId} <span class="muted">(a tenant's region cannot change)</span></p>`
    : selectField({
        name: 'regionId',
        label: 'Region',
        value: v.regionId,
        errors: o.errors,
        choices: o.regions.map((r) => ({ value: r.id, text: r.name })),
      })
}
${textField({ name: 'timezone', label: 'Timezone', value: v.timezone, errors: o.errors, hint: 'An IANA time zone, for example Europe/Dublin' })}
${
  o.editing
    ? html`${textField({ name: 'administrator', label: 'Administrator', type: 'email', value: v.administrator, errors: o.errors, hint: 'The e-mail of the person who administers this tenant' })}
<p><strong>Password sign-in:</strong> ${PASSWORD_POLICY[v.cxengageIdentityProvider as keyof typeof PASSWORD_POLICY] ?? v.cxengageIdentityProvider}.
<a href="${o.action.replace(/\/edit$/, '')}/password-policy">Change the password policy</a> (it says first how many members would lose password sign-in).</p>`
    : ''
}
${checkbox({ name: 'active', label: 'Active', checked: v.active })}
<button type="submit">${o.editing ? 'Save changes' : 'Create tenant'}</button>
</form>`
}
