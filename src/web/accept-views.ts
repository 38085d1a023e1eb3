import { PASSWORD_MAX_LENGTH } from '../crypto/passwords.js'
import type { Attribute } from '../errors.js'
import { formatUtc, html } from '../html.js'
import type { Invitation } from '../modules/memberships/acceptance.schemas.js'
import { errorSummary, textField } from './kit/forms.js'
import { failurePage, page, tooManyAttemptsPage as tooManyAttempts } from './layout.js'

/** The views of the acceptance page (docs/api.md#tenant-users-and-invitations). Every interpolated value is escaped by `html`. */

export interface FormState {
  token: string
  invitation: Invitation
  /** Field → what is wrong, shown beside the field and in a summary at the top. */
  errors?: Attribute
  firstName?: string
  lastName?: string
}

const LABELS = {
  password: 'Password',
  passwordConfirmation: 'Repeat the password',
  firstName: 'First name',
  lastName: 'Last name',
}

export function acceptFormPage(state: FormState, passwordMinLength: number): string {
  const { invitation: inv, errors } = state
  const password = {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minLength: passwordMinLength,
    maxLength: PASSWORD_MAX_LENGTH,
    errors,
  } as const
  const name = { optional: true, maxLength: 255, errors }
  const passwordPart = inv.needsPassword
    ? html`<h2>Choose your password</h2>
${textField({ ...password, name: 'password', label: LABELS.password, hint: `At least ${passwordMinLength} characters.` })}
${textField({ ...password, name: 'passwordConfirmation', label: LABELS.passwordConfirmation })}
${textField({ ...name, name: 'firstName', label: LABELS.firstName, autocomplete: 'given-name', value: state.firstName })}
${textField({ ...name, name: 'lastName', label: LABELS.lastName, autocomplete: 'family-name', value: state.lastName })}`
    : html`<p class="notice">You already have a way to sign in: accepting adds this tenant to your account.</p>`

  return page(
    `Join ${inv.tenantName}`,
    html`${errorSummary(errors, LABELS)}<h1>You are invited to join ${inv.tenantName}</h1>
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
  return tooManyAttempts(
    'Too many invitation links that do not work were opened from your address.',
    retryAfterSeconds,
  )
}

export function errorPage(requestId: string): string {
  return failurePage('The invitation could not be processed.', requestId)
}
