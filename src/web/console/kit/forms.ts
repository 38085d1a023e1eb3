import { html, type SafeHtml } from '../../../html.js'
import type { FormToken } from './form-token.js'

/**
 * GOV.UK-style form parts (DESIGN.md): one question per field, a label saying what it holds, an optional
 * hint, the error beside the field (tied by aria-describedby, the field marked aria-invalid) and all
 * errors summarised at the top, each linking to its field. Every value goes through `html` (escaped).
 */
export type Errors = Record<string, string>

export interface FieldOptions {
  name: string
  label: string
  value?: string | undefined
  hint?: string
  errors?: Errors | undefined
  type?: 'text' | 'email' | 'password' | 'search'
  autocomplete?: string
  required?: boolean
}

function described(name: string, hint: string | undefined, error: string | undefined) {
  const ids = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ')
  return ids ? html` aria-describedby="${ids}"` : ''
}

function parts(name: string, label: string, hint: string | undefined, error: string | undefined) {
  return {
    hint: hint ? html`<p class="hint" id="${name}-hint">${hint}</p>` : '',
    error: error
      ? html`<p class="error-message" id="${name}-error"><span class="skip">Error:</span> ${label} ${error}</p>`
      : '',
    invalid: error ? html` aria-invalid="true"` : '',
    described: described(name, hint, error),
  }
}

export function textField(options: FieldOptions): SafeHtml {
  const { name, label } = options
  const error = options.errors?.[name]
  const p = parts(name, label, options.hint, error)
  return html`<div class="field${error ? ' invalid' : ''}">
<label for="${name}">${label}</label>${p.hint}${p.error}
<input type="${options.type ?? 'text'}" id="${name}" name="${name}" value="${options.value ?? ''}"${p.invalid}${p.described}${
    options.autocomplete ? html` autocomplete="${options.autocomplete}"` : html` autocomplete="off"`
  }${options.required ? html` required` : ''}>
</div>`
}

export function textArea(options: FieldOptions & { rows?: number }): SafeHtml {
  const { name, label } = options
  const error = options.errors?.[name]
  const p = parts(name, label, options.hint, error)
  return html`<div class="field${error ? ' invalid' : ''}">
<label for="${name}">${label}</label>${p.hint}${p.error}
<textarea id="${name}" name="${name}" rows="${options.rows ?? 5}"${p.invalid}${p.described}>${options.value ?? ''}</textarea>
</div>`
}

export interface Choice {
  value: string
  text: string
  /** Why this choice may not be taken: shown disabled with the reason. */
  disabledBecause?: string | undefined
}

export function selectField(options: FieldOptions & { choices: Choice[] }): SafeHtml {
  const { name, label } = options
  const error = options.errors?.[name]
  const reasons = options.choices.filter((c) => c.disabledBecause)
  const hint = [options.hint, ...reasons.map((c) => `${c.text}: ${c.disabledBecause}`)]
    .filter(Boolean)
    .join(' ')
  const p = parts(name, label, hint || undefined, error)
  return html`<div class="field${error ? ' invalid' : ''}">
<label for="${name}">${label}</label>${p.hint}${p.error}
<select id="${name}" name="${name}"${p.invalid}${p.described}>
${options.choices.map(
  (c) =>
    html`<option value="${c.value}"${c.value === options.value ? html` selected` : ''}${c.disabledBecause ? html` disabled` : ''}>${c.text}${c.disabledBecause ? ' (not allowed)' : ''}</option>`,
)}
</select>
</div>`
}

export function checkbox(options: {
  name: string
  label: string
  checked: boolean
  hint?: string
}): SafeHtml {
  return html`<div class="field"><div class="check">
<input type="checkbox" id="${options.name}" name="${options.name}" value="on"${options.checked ? html` checked` : ''}${
    options.hint ? html` aria-describedby="${options.name}-hint"` : ''
  }>
<label for="${options.name}">${options.label}</label></div>${
    options.hint ? html`<p class="hint" id="${options.name}-hint">${options.hint}</p>` : ''
  }</div>`
}

/** The summary at the top of a failed form; focus goes to it (the enhancement script, or autofocus-free). */
export function errorSummary(errors: Errors | undefined, labels: Record<string, string>): SafeHtml | '' {
  const entries = Object.entries(errors ?? {})
  if (entries.length === 0) return ''
  return html`<div class="error-summary" role="alert" tabindex="-1" data-error-summary aria-labelledby="error-summary-title">
<h2 id="error-summary-title">There is a problem</h2>
<ul>${entries.map(([field, reason]) =>
    labels[field]
      ? html`<li><a href="#${field}">${labels[field]} ${reason}</a></li>`
      : html`<li>${reason}</li>`,
  )}</ul>
</div>`
}

/** The hidden fields every state-changing form carries: its id (the Idempotency-Key) and token (CSRF). */
export function formTokenFields(token: FormToken, version?: string): SafeHtml {
  return html`<input type="hidden" name="formId" value="${token.formId}">
<input type="hidden" name="formToken" value="${token.formToken}">${
    version ? html`<input type="hidden" name="version" value="${version}">` : ''
  }`
}

/** A one-button form (an action on a record): POST with its own token. */
export function actionButton(
  action: string,
  text: string,
  token: FormToken,
  extra: Record<string, string> = {},
  variant: '' | 'secondary' | 'warning' = 'secondary',
): SafeHtml {
  return html`<form method="post" action="${action}" class="inline">${formTokenFields(token)}${Object.entries(
    extra,
  ).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}<button type="submit"${variant ? html` class="${variant}"` : ''}>${text}</button></form>`
}

export function text(value: unknown): string {
  return typeof value === 'string' ? value : ''
}
