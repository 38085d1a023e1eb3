import { html, SafeHtml } from '../../../html.js'
import { type Errors, errorSummary, textField } from '../../kit/forms.js'
import type { FormToken } from '../kit/form-token.js'
import { formTokenFields } from '../kit/forms.js'
import { consolePage } from '../kit/layout.js'
import {
  type FactorChallenge,
  type FactorWay,
  factorErrorSummary,
  PASSKEY_SCRIPTS,
  secondFactorForms,
} from '../kit/second-factor.js'

export interface Provider {
  id: string
  name: string
}

const LABELS = { email: 'E-mail', password: 'Password' }

export function emailStep(
  nonce: string,
  o: {
    token: FormToken
    next: string
    email?: string
    errors?: Errors
    notice?: string
    warning?: string
    /** The form token of "Sign in with a passkey" (shown where the browser can use one). */
    passkey?: FormToken
  },
) {
  return consolePage(
    { title: 'Sign in', nonce, ...(o.passkey ? { scripts: PASSKEY_SCRIPTS } : {}) },
    html`${errorSummary(o.errors, LABELS)}
${o.notice ? html`<div class="notice success" role="status"><p>${o.notice}</p></div>` : ''}
${o.warning ? html`<div class="notice warning" role="alert"><p>${o.warning}</p></div>` : ''}
<h1>Sign in</h1>
<form method="post" action="/console/sign-in" novalidate>
${formTokenFields(o.token)}
<input type="hidden" name="next" value="${o.next}">
${textField({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'username webauthn', value: o.email, errors: o.errors })}
<button type="submit">Continue</button>
</form>
${
  o.passkey
    ? html`<div data-needs-webauthn hidden><h2>Or use a passkey</h2>
<form method="post" action="/console/sign-in/passkey">${formTokenFields(o.passkey)}
<input type="hidden" name="next" value="${o.next}">
<button type="submit" class="secondary">Sign in with a passkey</button>
</form></div>`
    : ''
}`,
  )
}

/**
 * Signing in with a passkey alone (docs/console.md "Second factors"): the API's request options (any
 * passkey of this service may answer: a discoverable credential names its account) on a page whose
 * script asks the browser; a verified passkey counts as both factors.
 */
export function passkeySignInPage(
  nonce: string,
  o: { token: FormToken; next: string; options: Record<string, unknown>; problem?: string | undefined },
) {
  return consolePage(
    { title: 'Sign in with a passkey', nonce, scripts: PASSKEY_SCRIPTS },
    html`<h1>Sign in with a passkey</h1>
${o.problem ? html`<div class="notice warning" role="alert"><p>${o.problem}</p></div>` : ''}
<p>Your browser will ask you to choose a passkey and to unlock it with this device’s screen lock,
fingerprint or face, or a security key.</p>
<form method="post" action="/console/sign-in/passkey/finish" data-passkey="authenticate" data-options="${JSON.stringify(o.options)}">
${formTokenFields(o.token)}<input type="hidden" name="next" value="${o.next}"><input type="hidden" name="webauthn" value="">
<div class="actions" data-passkey-controls hidden><button type="button" data-passkey-start>Use a passkey</button></div>
<p class="passkey-status" data-passkey-status role="status"></p>
</form>
<noscript><p class="notice">A passkey needs JavaScript, which is off in this browser.</p></noscript>
<p><a href="/console/sign-in?next=${encodeURIComponent(o.next)}">Sign in with your e-mail instead</a></p>`,
  )
}

export function secondStep(
  nonce: string,
  o: {
    token: FormToken
    next: string
    email: string
    password: boolean
    providers: Provider[]
    /** The token of the "Sign in with …" links: starting a sign-in sets this browser's nonce (CSRF-safe). */
    ssoStart: FormToken
    errors?: Errors
  },
) {
  const start = `formId=${o.ssoStart.formId}&formToken=${o.ssoStart.formToken}`
  const providers = o.providers.map(
    (p) =>
      html`<li><a class="button secondary" href="/console/sso/start/${p.id}?${start}">Sign in with ${p.name}</a></li>`,
  )
  return consolePage(
    { title: 'Sign in', nonce },
    html`${errorSummary(o.errors, LABELS)}
<h1>Sign in</h1>
<p>Signing in as <strong>${o.email}</strong>. <a href="/console/sign-in?next=${encodeURIComponent(o.next)}">Use another e-mail</a></p>
${
  o.password
    ? html`<form method="post" action="/console/sign-in" novalidate>
${formTokenFields(o.token)}
<input type="hidden" name="next" value="${o.next}">
<input type="hidden" name="step" value="password">
<input type="text" name="email" value="${o.email}" autocomplete="username" hidden>
${textField({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', errors: o.errors })}
<button type="submit">Sign in</button>
</form>`
    : html`<p>Your organisation signs you in through its identity provider.</p>`
}
${providers.length ? html`<h2>${o.password ? 'Or sign in with' : 'Sign in with'}</h2><ul class="actions plain">${providers}</ul>` : ''}`,
  )
}

/**
 * The second step of signing in (docs/console.md "Second factors"): the password was right and the
 * account has a second factor. The page asks for the authenticator app's code (or a recovery code, or a
 * passkey); every form carries the sign-in's challenge sealed to this browser (`challenge`), never in the
 * URL.
 */
export function secondFactorStep(
  nonce: string,
  o: {
    email: string
    next: string
    challenge: FactorChallenge
    sealed: string
    form: () => FormToken
    way: FactorWay
    errors?: Errors | undefined
  },
) {
  const passkey = o.challenge.factors.includes('webauthn')
  const ask =
    o.way === 'recovery'
      ? 'Enter one of your recovery codes.'
      : o.challenge.factors.includes('totp')
        ? 'Enter the code from your authenticator app.'
        : 'Use your passkey.'
  return consolePage(
    { title: 'Check it’s you', nonce, ...(passkey ? { scripts: PASSKEY_SCRIPTS } : {}) },
    html`${factorErrorSummary(o.errors)}
<h1>Check it’s you</h1>
<p>Signing in as <strong>${o.email}</strong>. Your account has a second factor: ${ask}</p>
${secondFactorForms({
  action: '/console/sign-in/second-factor',
  form: o.form,
  carry: { challenge: o.sealed },
  challenge: o.challenge,
  way: o.way,
  errors: o.errors,
})}
<p><a href="/console/sign-in?next=${encodeURIComponent(o.next)}">Start again</a></p>`,
  )
}

/**
 * The console's single sign-on landing page: the identity provider sent the browser here with the token
 * in the URL fragment (never sent to a server) and the sign-in's `attempt` in the query. The nonce script
 * posts both, with this form's CSRF token, to the console on this same site, which keeps the token
 * server-side once it has checked that this browser started that sign-in; the address bar is cleared first.
 */
export function ssoLandingPage(nonce: string, token: FormToken, attempt: string) {
  const script = `
(() => {
  const params = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', location.pathname);
  const form = document.getElementById('sso-form');
  if (!params.get('token')) { document.getElementById('sso-status').textContent = 'No sign-in to complete.'; return; }
  form.elements.token.value = params.get('token');
  form.submit();
})();`
  return consolePage(
    { title: 'Signing you in', nonce },
    html`<h1>Signing you in</h1>
<p id="sso-status" role="status">Completing your sign-in…</p>
<noscript><p class="notice">Single sign-on needs JavaScript to finish. <a href="/console/sign-in">Sign in with a password</a> instead.</p></noscript>
<form id="sso-form" method="post" action="/console/sso">${formTokenFields(token)}
<input type="hidden" name="attempt" value="${attempt}"><input type="hidden" name="token"></form>
<script nonce="${nonce}">${new SafeHtml(script)}</script>`,
  )
}

/** A hand-over the console refuses: nobody is signed in, and a session this browser has stays as it was. */
export function ssoRefusedPage(nonce: string, reason: string) {
  return consolePage(
    { title: 'Sign-in not finished', nonce },
    html`<h1>This sign-in was not finished</h1>
<div class="notice warning" role="alert"><p>${reason} Nobody was signed in and nothing was changed.</p></div>
<p><a href="/console/sign-in">Sign in again</a></p>`,
  )
}
