import type { Attribute } from '../errors.js'
import { formatUtc, html, type SafeHtml } from '../html.js'
import { page } from './layout.js'

/** The views of the password-reset page (API.md §10). Every interpolated value is escaped by `html`. */

export interface ResetFormState {
  token: string
  email: string
  expiresAt: string
  errors?: Attribute
}

const LABELS: Record<string, string> = {
  password: 'New password',
  passwordConfirmation: 'Repeat the password',
}

function passwordField(state: ResetFormState, name: string, minLength: number, hint?: string): SafeHtml {
  const error = state.errors?.[name]
  const ids = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ')
  return html`<div class="field">
  <label for="${name}">${LABELS[name] ?? name}</label>
  ${hint ? html`<p class="hint" id="${name}-hint">${hint}</p>` : ''}
  <input id="${name}" name="${name}" type="password" autocomplete="new-password" required
    minlength="${minLength}" maxlength="256" ${error ? html`aria-invalid="true"` : ''}
    ${ids ? html`aria-describedby="${ids}"` : ''}>
  ${error ? html`<p class="error" id="${name}-error">${LABELS[name] ?? name} ${error}.</p>` : ''}
</div>`
}

export function resetFormPage(state: ResetFormState, minLength: number): string {
  const errors = Object.entries(state.errors ?? {})
  return page(
    'Choose a new password',
    html`<h1>Choose a new password</h1>
${
  errors.length > 0
    ? html`<div class="summary" role="alert" aria-labelledby="summary-title">
  <h2 id="summary-title">Please correct ${errors.length === 1 ? 'this' : 'these'} to continue</h2>
  <ul>${errors.map(([name, problem]) => html`<li><a href="#${name}">${LABELS[name] ?? name} ${problem}</a></li>`)}</ul>
</div>`
    : ''
}
<dl>
  <dt>Account</dt><dd id="email">${state.email}</dd>
  <dt>Link expires</dt><dd><time datetime="${state.expiresAt}">${formatUtc(new Date(state.expiresAt))}</time></dd>
</dl>
<form method="post" action="password-reset">
  <input type="hidden" name="token" value="${state.token}">
  <input type="hidden" name="username" autocomplete="username" value="${state.email}">
  ${passwordField(state, 'password', minLength, `At least ${minLength} characters.`)}
  ${passwordField(state, 'passwordConfirmation', minLength)}
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
  const minutes = retryAfterSeconds ? Math.max(1, Math.ceil(Number(retryAfterSeconds) / 60)) : undefined
  return page(
    'Too many attempts',
    html`<h1>Too many attempts</h1>
<p role="alert">Too many links that do not work were opened from your address.
${minutes ? html`Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` : 'Try again later.'}</p>`,
  )
}

export function resetErrorPage(requestId: string): string {
  return page(
    'Something went wrong',
    html`<h1>Something went wrong</h1>
<p role="alert">The password could not be changed. Please try again in a moment.</p>
<p>If it keeps happening, quote this reference: <code>${requestId}</code>.</p>`,
  )
}
