import type { paths } from '../../../../generated/openapi.js'
import { html, type SafeHtml } from '../../../html.js'
import { checkbox, type Errors, errorSummary, textArea, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { actionButton, formTokenFields } from '../kit/forms.js'

type Path = '/v1/tenants/{tenantId}/identity-providers/{id}'
export type IdentityProvider = paths[Path]['get']['responses'][200]['content']['application/json']['result']
export type ProviderChanges = NonNullable<paths[Path]['put']['requestBody']>['content']['application/json']
export type Protocol = IdentityProvider['identityProvider']
type Tenant = { id: string; name: string }

export const PROTOCOL_NAMES: Record<Protocol, string> = { saml: 'SAML 2.0', oidc: 'OpenID Connect' }

export const PROVIDER_LABELS = {
  name: 'Name',
  description: 'Description',
  metadataUrl: 'Metadata URL',
  metadataFile: 'Metadata file',
  issuer: 'Issuer',
  clientId: 'Client ID',
  clientSecret: 'Client secret',
  emailMapping: 'E-mail attribute',
  active: 'Active',
}

export interface ProviderFormValues {
  name: string
  description: string
  metadataUrl: string
  issuer: string
  clientId: string
  emailMapping: string
  active: boolean
}

export function providersBody(o: { tenant: Tenant; providers: IdentityProvider[] }) {
  const t = o.tenant
  const base = `/console/tenants/${t.id}/identity-providers`
  return html`<h1>Identity providers of ${t.name}</h1>
<div class="actions">
<a class="button" href="${base}/new?protocol=saml">New SAML provider</a>
<a class="button" href="${base}/new?protocol=oidc">New OpenID Connect provider</a>
<a href="/console/tenants/${t.id}/password-policy">Password policy</a>
</div>
${
  o.providers.length === 0
    ? html`<p>${t.name} has no identity providers: its members sign in with their password.</p>`
    : table('Identity providers', ['Name', 'Protocol', 'State'], o.providers, (p) => [
        html`<a href="${base}/${p.id}">${p.name}</a>`,
        PROTOCOL_NAMES[p.identityProvider],
        p.active ? html`<span class="tag enabled">active</span>` : html`<span class="tag">inactive</span>`,
      ])
}`
}

/** The upload box: a plain file field (the form is multipart), its error beside it as for the others. */
function fileField(errors: Errors | undefined, hint: string): SafeHtml {
  const error = errors?.metadataFile
  return html`<div class="field${error ? ' invalid' : ''}">
<label for="metadataFile">Metadata file</label><p class="hint" id="metadataFile-hint">${hint}</p>${
    error
      ? html`<p class="error-message" id="metadataFile-error"><span class="skip">Error:</span> Metadata file ${error}</p>`
      : ''
  }
<input type="file" id="metadataFile" name="metadataFile" accept=".xml,application/xml,text/xml" aria-describedby="metadataFile-hint${error ? ' metadataFile-error' : ''}"${error ? html` aria-invalid="true"` : ''}>
</div>`
}

export function providerForm(o: {
  action: string
  token: FormToken
  version?: string | undefined
  protocol: Protocol
  values: ProviderFormValues
  secretSet: boolean
  errors?: Errors | undefined
  editing: boolean
}) {
  const v = o.values
  const saml = o.protocol === 'saml'
  const secretHint = o.secretSet
    ? 'A secret is set: it is never shown. Type a new one to replace it, or leave this empty to keep it.'
    : 'The secret the provider issued for this client. It is stored encrypted and never shown again.'
  return html`${errorSummary(o.errors, PROVIDER_LABELS)}
<form method="post" action="${o.action}" novalidate${saml ? html` enctype="multipart/form-data"` : ''}>
${formTokenFields(o.token, o.version)}
<input type="hidden" name="protocol" value="${o.protocol}">
<p><strong>Protocol:</strong> ${PROTOCOL_NAMES[o.protocol]}</p>
${textField({ name: 'name', label: 'Name', value: v.name, errors: o.errors, hint: 'Shown on the sign-in page, e.g. "Sign in with Okta"' })}
${textArea({ name: 'description', label: 'Description', value: v.description, errors: o.errors, rows: 2 })}
${
  saml
    ? html`${textField({ name: 'metadataUrl', label: 'Metadata URL', value: v.metadataUrl, errors: o.errors, hint: 'Where the provider publishes its SAML metadata. Or upload the file below.' })}
${fileField(o.errors, o.editing ? 'Upload new metadata to replace what is stored (leave empty to keep it).' : 'The SAML metadata XML the provider gave you, if it has no URL.')}`
    : html`${textField({ name: 'issuer', label: 'Issuer', value: v.issuer, errors: o.errors, hint: 'The provider’s issuer URL; its discovery document is read from there.' })}
${textField({ name: 'clientId', label: 'Client ID', value: v.clientId, errors: o.errors })}
${textField({ name: 'clientSecret', label: 'Client secret', type: 'password', autocomplete: 'new-password', errors: o.errors, hint: secretHint })}`
}
${textField({ name: 'emailMapping', label: 'E-mail attribute', value: v.emailMapping, errors: o.errors, hint: saml ? 'The assertion attribute holding the e-mail. Left empty: the NameID.' : 'The claim holding the e-mail. Left empty: email.' })}
${checkbox({ name: 'active', label: 'Active', checked: v.active, hint: 'Members can sign in with it. Run a test sign-in first: it works while inactive.' })}
<button type="submit">${o.editing ? 'Save changes' : 'Add identity provider'}</button>
</form>`
}

/** A URL to paste into the provider's settings: a read-only box that selects easily, labelled. */
function copyField(id: string, label: string, value: string): SafeHtml {
  return html`<div class="field"><label for="${id}">${label}</label>
<input type="text" id="${id}" value="${value}" readonly></div>`
}

export function providerBody(o: {
  tenant: Tenant
  provider: IdentityProvider
  form: () => FormToken
  notice?: string | undefined
}) {
  const p = o.provider
  const base = `/console/tenants/${o.tenant.id}/identity-providers/${p.id}`
  const sp = p.serviceProvider
  return html`<h1>${p.name}</h1>
${o.notice ? html`<div class="notice" role="status"><p>${o.notice}</p></div>` : ''}
<dl class="summary">
<dt>Protocol</dt><dd>${PROTOCOL_NAMES[p.identityProvider]}</dd>
<dt>Description</dt><dd>${p.description || '—'}</dd>
<dt>State</dt><dd>${p.active ? 'Active: members can sign in with it' : 'Inactive'}</dd>
<dt>E-mail attribute</dt><dd>${p.emailMapping}</dd>
${
  p.identityProvider === 'saml'
    ? html`<dt>Metadata</dt><dd>${p.metadataUrl ?? 'From an uploaded file'}</dd>`
    : html`<dt>Issuer</dt><dd>${p.issuer ?? '—'}</dd><dt>Client ID</dt><dd>${p.clientId ?? '—'}</dd>
<dt>Client secret</dt><dd>${p.clientSecret ? 'set' : 'not set'}</dd>`
}
</dl>
<div class="actions">
${actionButton(`${base}/test`, 'Test sign-in', o.form(), {}, '')}
<a class="button secondary" href="${base}/edit">Edit identity provider</a>
${
  p.active
    ? actionButton(`${base}/active`, 'Deactivate', o.form(), { active: 'false' })
    : actionButton(`${base}/active`, 'Activate', o.form(), { active: 'true' })
}
<a href="/console/tenants/${o.tenant.id}/history?targetId=${p.id}">History</a>
</div>
<h2>To give the identity provider</h2>
${
  p.identityProvider === 'saml'
    ? html`<p>Register this service at the provider with these values (or give it the metadata URL).</p>
${copyField('sp-metadata', 'Service provider metadata URL', sp.metadataUrl)}
${copyField('sp-acs', 'ACS URL (assertion consumer service)', sp.acsUrl)}
${copyField('sp-entity', 'Entity ID (audience)', sp.entityId)}`
    : html`<p>Register this redirect URI for the client at the provider.</p>
${copyField('sp-redirect', 'Redirect URI', sp.redirectUri)}`
}`
}

export const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  created: 'The identity provider was added. Run a test sign-in before activating it.',
  activated: 'Active: members can sign in with it.',
  deactivated: 'Inactive: nobody can sign in with it.',
}
