import type { Attribute } from '../errors.js'
import { formatUtc, html, type SafeHtml } from '../html.js'
import type { Invitation } from '../modules/memberships/acceptance.schemas.js'
import { page } from './layout.js'

/** The views of the acceptance page (API.md §4.4). Every interpolated value is escaped by `html`. */

export interface FormState {
  token: string
  invitation: Invitation
  /** Field → what is wrong, shown beside the field and in a summary at the top. */
  errors?: Attribute
  firstName?: string
  lastName?: string
}

const LABELS: Record<string, string> = {
  password: 'Password',
  passwordConfirmation: 'Repeat the password',
  firstName: 'First name',
  lastName: 'Last name',
}

function describedBy(...ids: Array<string | false>): string {
  return ids.filter(Boolean).join(' ')
}

function field(
  state: FormState,
  name: string,
  input: { type: string; autocomplete: string; value?: string; required?: boolean; minlength?: number },
  hint?: string,
): SafeHtml {
  const error = state.errors?.[name]
  const hintId = hint ? `${name}-hint` : false
  const errorId = error ? `${name}-error` : false
  return html`<div class="field">
  <label for="${name}">${LABELS[name] ?? name}${input.required ? '' : ' (optional)'}</label>
  ${hint ? html`<p class="hint" id="${name}-hint">${hint}</p>` : ''}
  <input id="${name}" name="${name}" type="${input.type}" autocomplete="${input.autocomplete}"
    ${input.value !== undefined ? html`value="${input.value}"` : ''}
    ${input.required ? html`required` : ''} ${input.minlength ? html`minlength="${input.minlength}"` : ''}
    maxlength="${input.type === 'password' ? 256 : 255}"
    ${error ? html`aria-invalid="true"` : ''}
    ${hintId || errorId ? html`aria-describedby="${describedBy(hintId, errorId)}"` : ''}>
  ${error ? html`<p class="error" id="${name}-error">${LABELS[name] ?? name} ${error}.</p>` : ''}
</div>`
}

function summary(errors: Attribute | undefined): SafeHtml | '' {
  const entries = Object.entries(errors ?? {})
  if (entries.length === 0) return ''
  // role="alert" makes a screen reader announce the problems as the page loads.
  return html`<div class="summary" role="alert" aria-labelledby="summary-title">
  <h2 id="summary-title">Please correct ${entries.length === 1 ? 'this' : 'these'} to continue</h2>
  <ul>${entries.map(([name, problem]) => html`<li><a href="#${name}">${LABELS[name] ?? name} ${problem}</a></li>`)}</ul>
</div>`
}

export function acceptFormPage(state: FormState, passwordMinLength: number): string {
  const { invitation: inv } = state
  const passwordPart = inv.needsPassword
    ? html`<h2>Choose your password</h2>
${field(state, 'password', { type: 'password', autocomplete: 'new-password', required: true, minlength: passwordMinLength }, `At least ${passwordMinLength} characters.`)}
${field(state, 'passwordConfirmation', { type: 'password', autocomplete: 'new-password', required: true, minlength: passwordMinLength })}
${field(state, 'firstName', { type: 'text', autocomplete: 'given-name', value: state.firstName ?? '' })}
${field(state, 'lastName', { type: 'text', autocomplete: 'family-name', value: state.lastName ?? '' })}`
    : html`<p class="notice">You already have a way to sign in: accepting adds this tenant to your account.</p>`

  return page(
    `Join ${inv.tenantName}`,
    html`<h1>You are invited to join ${inv.tenantName}</h1>
${summary(state.errors)}
<dl>
  <dt>Tenant</dt><dd id="tenant-name">${inv.tenantName}</dd>
  <dt>Role</dt><dd id="role-name">${inv.roleName}</dd>
  <dt>E-mail</dt><dd id="email">${inv.email}</dd>
  <dt>Link expires</dt><dd><time datetime="${inv.expiresAt}">${formatUtc(new Date(inv.expiresAt))}</time></dd>
</dl>
<form method="post" action="accept">
  <input type="hidden" name="token" value="${state.token}">
  <input type="hidden" name="username" autocomplete="username" value="${inv.email}">
  ${passwordPart}
  <button type="submit">Accept the invitation</button>
</form>`,
  )
}

export function acceptedPage(facts: {
  tenantName: string
  roleName: string
  email: string
  passwordSet: boolean
}): string {
  return page(
    `Welcome to ${facts.tenantName}`,
    html`<h1>You have joined ${facts.tenantName}</h1>
<p role="status">Your invitation is accepted: you are a member of <strong>${facts.tenantName}</strong> with the role
<strong>${facts.roleName}</strong>.</p>
<p>Sign in as <strong>${facts.email}</strong>${facts.passwordSet ? ' with the password you just chose' : ''}.</p>`,
  )
}

export function expiredPage(expiresAt: string | undefined, ttlHours: number): string {
  return page(
    'Invitation expired',
    html`<h1>This invitation has expired</h1>
<p role="alert">The link expired${expiresAt ? html` on <time datetime="${expiresAt}">${formatUtc(new Date(expiresAt))}</time>` : ''}.
Invitation links work for ${ttlHours} hours.</p>
<p>Ask the person who invited you to send a new invitation; the new e-mail will have a fresh link.</p>`,
  )
}

export function usedPage(tenantName: string, email: string): string {
  return page(
    'Invitation already accepted',
    html`<h1>This invitation has already been accepted</h1>
<p role="alert">You are already a member of <strong>${tenantName}</strong>. An invitation link works only once.</p>
<p>Sign in as <strong>${email}</strong>.</p>`,
  )
}

export function invalidLinkPage(): string {
  return page(
    'Invitation link not valid',
    html`<h1>This invitation link is not valid</h1>
<p role="alert">The invitation was cancelled, or replaced by a newer one — or the link is incomplete.</p>
<p>If you received a newer invitation e-mail, use the link in that one. Otherwise ask the person who invited
you to send a new invitation.</p>`,
  )
}

export function tooManyAttemptsPage(retryAfterSeconds: string | undefined): string {
  const minutes = retryAfterSeconds ? Math.max(1, Math.ceil(Number(retryAfterSeconds) / 60)) : undefined
  return page(
    'Too many attempts',
    html`<h1>Too many attempts</h1>
<p role="alert">Too many invitation links that do not work were opened from your address.
${minutes ? html`Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` : 'Try again later.'}</p>`,
  )
}

export function errorPage(requestId: string): string {
  return page(
    'Something went wrong',
    html`<h1>Something went wrong</h1>
<p role="alert">The invitation could not be processed. Please try again in a moment.</p>
<p>If it keeps happening, quote this reference: <code>${requestId}</code>.</p>`,
  )
}
