import { PASSWORD_MAX_LENGTH } from '../crypto/passwords.js'
import type { Attribute } from '../errors.js'
import { formatUtc, html } from '../html.js'
import { errorSummary, textField } from './kit/forms.js'
import { failurePage, page, tooManyAttemptsPage } from './layout.js'

/** The views of the password-reset page (docs/api.md#passwords-and-the-existing-clients-flows). Every interpolated value is escaped by `html`. */

export interface ResetFormState {
  token: string
  email: string
  expiresAt: string
  errors?: Attribute
}

const LABELS = {
  password: 'New password',
  passwordConfirmation: 'Repeat the password',
}

export function resetFormPage(state: ResetFormState, minLength: number): string {
  const password = {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minLength,
    maxLength: PASSWORD_MAX_LENGTH,
    errors: state.errors,
  } as const
  return page(
    'Choose a new password',
    html`${errorSummary(state.errors, LABELS)}<h1>Choose a new password</h1>
<dl>
  <dt>Account</dt><dd id="email">${state.email}</dd>
  <dt>Link expires</dt><dd><time datetime="${state.expiresAt}">${formatUtc(new Date(state.expiresAt))}</time></dd>
</dl>
<form method="post" action="password-reset">
  <input type="hidden" name="token" value="${state.token}">
  <input type="hidden" name="username" autocomplete="username" value="${state.email}">
  ${textField({ ...password, name: 'password', label: LABELS.password, hint: `At least ${minLength} characters.` })}
  ${textField({ ...password, name: 'passwordConfirmation', label: LABELS.passwordConfirmation })}
  <button type="submit">Set the new password</button>
</form>`,
  )
}

export function passwordSetPage(email: string): string {
  return page(
    'Password changed',
    html`<h1>Your password is changed</h1>
<p role="status">Sign in as <strong>${email}</strong> with your new password.</p>
<p>Every session signed in before this change has ended.</p>`,
  )
}

export function resetExpiredPage(): string {
  return page(
    'Link expired',
    html`<h1>This password-reset link has expired</h1>
<p role="alert">Ask for a new password-reset e-mail; the new one will have a fresh link.</p>`,
  )
}

export function resetInvalidPage(): string {
  return page(
    'Link not valid',
    html`<h1>This password-reset link is not valid</h1>
<p role="alert">It was already used, or replaced by a newer one — or the link is incomplete.</p>
<p>If you received a newer e-mail, use the link in that one. Otherwise ask for a new password reset.</p>`,
  )
}

export function resetTooManyPage(retryAfterSeconds: string | undefined): string {
  return tooManyAttemptsPage(
    'Too many links that do not work were opened from your address.',
    retryAfterSeconds,
  )
}

export function resetErrorPage(requestId: string): string {
  return failurePage('The password could not be changed.', requestId)
}
