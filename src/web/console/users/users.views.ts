import type { paths } from '../../../../generated/openapi.js'
import { html } from '../../../html.js'
import { type Choice, type Errors, errorSummary, selectField, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { actionButton, formTokenFields } from '../kit/forms.js'
import { personName } from '../kit/readable.js'

export type User =
  paths['/v1/users/{userId}']['get']['responses'][200]['content']['application/json']['result']

export const USER_LABELS = {
  email: 'E-mail',
  firstName: 'First name',
  lastName: 'Last name',
  roleId: 'Role',
  confirmation: 'E-mail',
}

export function usersBody(o: {
  users: User[]
  q: string
  nextCursor?: string | undefined
  canCreate: boolean
}) {
  return html`<h1>Users</h1>
${o.canCreate ? html`<p class="actions"><a class="button" href="/console/users/new">New user</a> <a class="button secondary" href="/console/users/import">Import users</a></p>` : ''}
<form method="get" action="/console/users" class="search" role="search" aria-label="Search users">
<div class="field"><label for="q">Search by e-mail or name</label><input type="search" id="q" name="q" value="${o.q}" autocomplete="off"></div>
<button type="submit" class="secondary">Search</button>
</form>
${
  o.users.length === 0
    ? html`<p>No users match.</p>`
    : table('Users', ['Name', 'E-mail', 'Status'], o.users, (u) => [
        html`<a href="/console/users/${u.id}">${personName(u)}</a>`,
        u.email || '—',
        u.status,
      ])
}
${o.nextCursor ? html`<p><a href="/console/users?q=${encodeURIComponent(o.q)}&amp;cursor=${o.nextCursor}">Next page</a></p>` : ''}`
}

export function newUserForm(o: {
  token: FormToken
  roles: Choice[]
  values: Record<string, string>
  errors?: Errors | undefined
}) {
  return html`${errorSummary(o.errors, USER_LABELS)}<h1>New user</h1>
<form method="post" action="/console/users" novalidate>${formTokenFields(o.token)}
${textField({ name: 'email', label: 'E-mail', type: 'email', value: o.values.email, errors: o.errors })}
${textField({ name: 'firstName', label: 'First name', value: o.values.firstName, errors: o.errors })}
${textField({ name: 'lastName', label: 'Last name', value: o.values.lastName, errors: o.errors })}
${selectField({ name: 'roleId', label: 'Role', value: o.values.roleId, errors: o.errors, choices: o.roles })}
<button type="submit">Create user</button>
</form>`
}

export function userBody(o: {
  user: User
  version: string
  form: () => FormToken
  canManage: boolean
  /** May read the platform's audit events, where a platform user's history is. */
  mayReadAudit: boolean
  errors?: Errors | undefined
  values?: Record<string, string>
  /** A notice after an action (`?done=`). */
  notice?: string | undefined
  /** The person's own record: their factors and sessions are their Security page's, not these buttons'. */
  self?: boolean
}) {
  const u = o.user
  const base = `/console/users/${u.id}`
  return html`${errorSummary(o.errors, USER_LABELS)}<h1>${personName(u)}</h1>
${o.notice ? html`<div class="notice success" role="status"><p>${o.notice}</p></div>` : ''}
<dl class="summary">
<dt>E-mail</dt><dd>${u.email}</dd>
<dt>Status</dt><dd>${u.status}</dd>
<dt>Password</dt><dd>${u.hasPassword ? 'Set' : 'Not set'}</dd>
<dt>Password-reset link</dt><dd>${u.resetPasswordExpiryDate ? `live until ${u.resetPasswordExpiryDate.replace('T', ' ').slice(0, 16)} UTC (e-mail ${u.resetPasswordEmailStatus ?? 'not sent'})` : 'None'}</dd>
</dl>
${o.mayReadAudit ? html`<p><a href="/console/audit?targetId=${u.id}">History</a></p>` : ''}
${
  o.canManage
    ? html`<h2>Edit</h2>
<form method="post" action="${base}/edit" novalidate>${formTokenFields(o.form(), o.version)}
${textField({ name: 'firstName', label: 'First name', value: o.values?.firstName ?? u.firstName, errors: o.errors })}
${textField({ name: 'lastName', label: 'Last name', value: o.values?.lastName ?? u.lastName, errors: o.errors })}
<button type="submit">Save changes</button>
</form>
<h2>Actions</h2>
<div class="actions">
${actionButton(`${base}/reset`, 'Send a password-reset link', o.form())}
${u.status === 'disabled' ? actionButton(`${base}/status`, 'Enable', o.form(), { status: 'enabled' }) : actionButton(`${base}/status`, 'Disable', o.form(), { status: 'disabled' })}
<a class="button secondary" href="${base}/erase">Erase…</a>
</div>
${
  o.self
    ? html`<p>Your own second factors and sessions are on your <a href="/console/security">Security</a> page.</p>`
    : html`<h2>Sign-in</h2>
<div class="actions">
<a class="button secondary" href="${base}/reset-factors">Reset second factors…</a>
<a class="button secondary" href="${base}/sign-out-everywhere">Sign out everywhere…</a>
</div>`
}`
    : ''
}`
}

export function eraseForm(o: { user: User; token: FormToken; errors?: Errors | undefined }) {
  return html`${errorSummary(o.errors, USER_LABELS)}<h1>Erase ${personName(o.user)}</h1>
<div class="notice warning"><p>Erasing removes: every membership in every tenant; their sign-in tokens, the API keys
they created and any password-reset link; their e-mail (it becomes free), names, telephone, external id and
password; and the personal data inside audit events. Only the record's id stays, marked erased, so that
references still resolve. This cannot be undone.</p></div>
<form method="post" action="/console/users/${o.user.id}/erase" novalidate>${formTokenFields(o.token)}
${textField({ name: 'confirmation', label: 'E-mail', hint: `Type ${o.user.email} to confirm`, errors: o.errors })}
<button type="submit" class="warning">Erase this person</button>
</form>`
}
