import { html, type SafeHtml } from '../../../html.js'
import { type Errors, errorSummary } from '../../kit/forms.js'
import type { FormToken } from './form-token.js'
import { formTokenFields } from './forms.js'
import { OneOf, Typed } from './inputs.js'

/**
 * The forms that ask a person for their second factor (docs/console.md "Second factors"): the second step
 * of signing in and the step-up of a sensitive action draw the same ones — the code of an authenticator
 * app, a recovery code, or a passkey. The code and the recovery code are plain forms (no JavaScript
 * needed); the passkey needs the browser's WebAuthn, so its button is drawn hidden and shown by the
 * passkey script (kit/assets.ts), and without JavaScript the page says so.
 */
export type FactorKind = 'totp' | 'webauthn' | 'recovery'

/** What the API's challenge (`error.mfa`) says the person can answer with. */
export interface FactorChallenge {
  /** The API's challenge token (`error.mfa.token`), sent back with a passkey's answer. */
  token?: string | undefined
  factors: FactorKind[]
  /** WebAuthn request options (JSON form), when the account has a passkey. */
  webauthn?: Record<string, unknown> | undefined
}

/** Which form a page shows: the app's code (the default when the account has an app) or a recovery code. */
export type FactorWay = 'code' | 'recovery'

/**
 * The fields of the forms, as the error summary names them. A passkey's answer has no field a person
 * types in: its error is a whole sentence in the summary.
 */
export const FACTOR_LABELS: Record<string, string> = {
  code: 'Code',
  recoveryCode: 'Recovery code',
}

/**
 * The fields the forms post back, on both pages: the answer — the app's code, a recovery code or a
 * passkey's (`method`) — or which form to show instead (`show`). Each page adds what it carries along
 * (the sealed sign-in challenge, or the interrupted action to resume).
 */
export const FACTOR_ANSWER_FIELDS = {
  method: OneOf(['code', 'recovery', 'passkey']),
  show: OneOf(['code', 'recovery']),
  code: Typed(64),
  recoveryCode: Typed(64),
  webauthn: Typed(16_384),
}

/** The scripts a page asking for a passkey loads (served by the console, under the page's nonce). */
export const PASSKEY_SCRIPTS = ['/console/assets/webauthn.js', '/console/assets/passkey.js']

export interface SecondFactorOptions {
  /** Where every form of the page posts. */
  action: string
  /** A fresh form token for each form. */
  form: () => FormToken
  /** Hidden fields each form carries back (the sealed challenge, or the sealed interrupted action). */
  carry: Record<string, string>
  challenge: FactorChallenge
  way: FactorWay
  errors?: Errors | undefined
}

export function wayOf(challenge: FactorChallenge, asked: string | undefined): FactorWay {
  if (asked === 'recovery' || asked === 'code') return asked
  return challenge.factors.includes('totp') ? 'code' : 'recovery'
}

/** The summary of a factor form's errors, drawn at the top of the page, before its heading. */
export function factorErrorSummary(errors: Errors | undefined): SafeHtml | '' {
  return errorSummary(errors, FACTOR_LABELS)
}

/** The form of the chosen way, the passkey, and the links to the other ways (the summary is the page's). */
export function secondFactorForms(o: SecondFactorOptions): SafeHtml {
  const has = (kind: FactorKind) => o.challenge.factors.includes(kind)
  const hidden = (extra: Record<string, string>) =>
    html`${formTokenFields(o.form())}${Object.entries({ ...o.carry, ...extra }).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
    )}`
  const focus = !o.errors || Object.keys(o.errors).length === 0
  const passkeyOnly = has('webauthn') && !has('totp') && o.way === 'code'
  const main =
    o.way === 'code' && has('totp')
      ? html`<form method="post" action="${o.action}" novalidate>${hidden({ method: 'code' })}
${codeField({
  name: 'code',
  label: 'Code from your authenticator app',
  short: 'Code',
  hint: 'The 6-digit code your authenticator app shows for this account now.',
  numeric: true,
  focus,
  errors: o.errors,
})}
<button type="submit">Continue</button>
</form>`
      : o.way === 'recovery' || !has('webauthn')
        ? html`<form method="post" action="${o.action}" novalidate>${hidden({ method: 'recovery' })}
${codeField({
  name: 'recoveryCode',
  label: 'Recovery code',
  short: 'Recovery code',
  hint: 'One of the 10-character codes you saved when you set up your second factor. Each code works once.',
  numeric: false,
  focus,
  errors: o.errors,
})}
<button type="submit">Continue</button>
</form>`
        : ''
  const passkey = has('webauthn')
    ? html`${passkeyOnly ? '' : html`<h2>Or use a passkey</h2>`}
<form method="post" action="${o.action}" data-passkey="authenticate" data-options="${JSON.stringify(o.challenge.webauthn ?? {})}">
${hidden({ method: 'passkey' })}<input type="hidden" name="webauthn" value="">
<div class="actions" data-passkey-controls hidden><button type="button" class="${passkeyOnly ? '' : 'secondary'}" data-passkey-start>Use a passkey</button></div>
<p class="passkey-status" data-passkey-status role="status"></p>
</form>
<noscript><p class="notice">A passkey needs JavaScript, which is off in this browser.${
        has('totp') || has('recovery')
          ? ' Use the code from your authenticator app or a recovery code instead.'
          : ''
      }</p></noscript>`
    : ''
  const switchTo = (way: FactorWay, text: string) =>
    html`<form method="post" action="${o.action}" class="inline">${hidden({ show: way })}<button type="submit" class="text-button">${text}</button></form>`
  const others: SafeHtml[] = []
  if (o.way !== 'code' && has('totp')) others.push(switchTo('code', 'Use your authenticator app'))
  if (o.way !== 'recovery' && has('recovery')) others.push(switchTo('recovery', 'Use a recovery code'))
  return html`${main}
${passkey}
${others.length ? html`<ul class="plain other-ways">${others.map((other) => html`<li>${other}</li>`)}</ul>` : ''}`
}

/**
 * A one-time code's field, after the page kit's text field (web/kit/forms.ts): label, hint, the error
 * beside it; focused when the page opens (no error summary to take the focus), since it is the one thing
 * the page asks; `one-time-code` so a phone offers the code it received.
 */
function codeField(o: {
  name: string
  label: string
  /** How the error summary and the message name the field. */
  short: string
  hint: string
  numeric: boolean
  focus: boolean
  errors?: Errors | undefined
}): SafeHtml {
  const error = o.errors?.[o.name]
  const described = [`${o.name}-hint`, error ? `${o.name}-error` : ''].filter(Boolean).join(' ')
  return html`<div class="field${error ? ' invalid' : ''}">
<label for="${o.name}">${o.label}</label><p class="hint" id="${o.name}-hint">${o.hint}</p>${
    error
      ? html`<p class="error-message" id="${o.name}-error"><span class="skip">Error:</span> ${o.short} ${error}</p>`
      : ''
  }
<input type="text" class="code" id="${o.name}" name="${o.name}"${o.numeric ? html` inputmode="numeric"` : ''} autocomplete="one-time-code" spellcheck="false" aria-describedby="${described}"${
    error ? html` aria-invalid="true"` : ''
  }${o.focus ? html` autofocus` : ''}>
</div>`
}

/** How a person answered: the form's `method`. */
export type FactorMethod = 'code' | 'recovery' | 'passkey'

/** The field of the form a method's answer was typed in (the passkey's is its hidden answer). */
export function factorField(method: FactorMethod): 'code' | 'recoveryCode' | 'webauthn' {
  return method === 'code' ? 'code' : method === 'recovery' ? 'recoveryCode' : 'webauthn'
}

/**
 * What a person sent, as the API's body takes it (`code`, `recoveryCode` or `webauthn`), or the error
 * of a field left empty. A code is read without the spaces a person may type between its groups; a
 * passkey's answer is the browser's JSON.
 */
export function factorAnswer(
  method: FactorMethod,
  fields: { code?: string | undefined; recoveryCode?: string | undefined; webauthn?: string | undefined },
): { answer: { code?: string; recoveryCode?: string; webauthn?: PasskeyAnswer } } | { errors: Errors } {
  if (method === 'passkey') {
    const webauthn = passkeyAnswerOf(fields.webauthn)
    if (webauthn) return { answer: { webauthn } }
    return { errors: { webauthn: 'The passkey was not used: try again, or use another way.' } }
  }
  const field = factorField(method)
  const typed = (fields[field] ?? '').replace(/[\s-]/g, '')
  if (!typed) return { errors: { [field]: 'is required' } }
  return { answer: method === 'code' ? { code: typed } : { recoveryCode: typed } }
}

/**
 * The error beside the field of an answer the API refused: a wrong factor, one the API could not read
 * (400: its own words), or too many tries (429).
 */
export function refusedFactor(
  method: FactorMethod,
  refused: { code: number; attribute?: Record<string, string> | undefined },
): Errors {
  const field = factorField(method)
  if (refused.code === 429)
    return {
      [field]:
        method === 'passkey'
          ? 'Too many wrong answers: wait a few minutes, then try again.'
          : 'was tried too many times: wait a few minutes, then try again',
    }
  const said = refused.attribute?.[field]
  if (refused.code === 400 && said && method !== 'passkey') return { [field]: said }
  const reason =
    method === 'code'
      ? 'is not right: enter the code your authenticator app shows now'
      : method === 'recovery'
        ? 'is not right, or was used already: each recovery code works once'
        : 'The passkey was not accepted: try again, or use another way.'
  return { [field]: reason }
}

/**
 * What the browser's WebAuthn answered, as @simplewebauthn/browser hands it over (its JSON form): the
 * console passes it on to the API, which checks every part of it; here only that it is such an answer.
 */
export interface PasskeyAnswer {
  [field: string]: unknown
  id: string
  type: 'public-key'
  response: { [field: string]: unknown }
}

export function passkeyAnswerOf(json: string | undefined): PasskeyAnswer | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(json ?? '')
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const answer = parsed as Record<string, unknown>
  const response = answer.response
  if (typeof answer.id !== 'string' || answer.type !== 'public-key') return undefined
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return undefined
  return { ...answer, id: answer.id, type: 'public-key', response: response as Record<string, unknown> }
}
