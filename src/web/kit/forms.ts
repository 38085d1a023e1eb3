import { html, SafeHtml } from '../../html.js'

/**
 * The one form kit of every page (docs/pages.md), after the GOV.UK Design
 * System: one question per field, a label saying what it holds, an optional hint, the error beside the
 * field (tied by aria-describedby, the field marked aria-invalid) and every error summarised at the top,
 * each linking to its field. Every value goes through `html` (escaped).
 */
export type Errors = Record<string, string>

export interface FieldOptions {
  name: string
  label: string
  value?: string | undefined
  hint?: string | undefined
  errors?: Errors | undefined
  type?: 'text' | 'email' | 'password' | 'search'
  /** The browser's autofill hint; "off" by default. */
  autocomplete?: string
  required?: boolean
  /** "(optional)" after the label, where most of a form's fields are required. */
  optional?: boolean
  minLength?: number | undefined
  maxLength?: number | undefined
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

function lengths(options: FieldOptions) {
  return html`${options.minLength ? html` minlength="${options.minLength}"` : ''}${
    options.maxLength ? html` maxlength="${options.maxLength}"` : ''
  }`
}

export function textField(options: FieldOptions): SafeHtml {
  const { name, label } = options
  const error = options.errors?.[name]
  const p = parts(name, label, options.hint, error)
  // A password is never written back into the page.
  const value = options.type === 'password' ? '' : html` value="${options.value ?? ''}"`
  return html`<div class="field${error ? ' invalid' : ''}">
<label for="${name}">${label}${options.optional ? ' (optional)' : ''}</label>${p.hint}${p.error}
<input type="${options.type ?? 'text'}" id="${name}" name="${name}"${value}${p.invalid}${p.described} autocomplete="${
    options.autocomplete ?? 'off'
  }"${options.required ? html` required` : ''}${lengths(options)}>
</div>`
}

export function textArea(options: FieldOptions & { rows?: number }): SafeHtml {
  const { name, label } = options
  const error = options.errors?.[name]
  const p = parts(name, label, options.hint, error)
  return html`<div class="field${error ? ' invalid' : ''}">
<label for="${name}">${label}${options.optional ? ' (optional)' : ''}</label>${p.hint}${p.error}
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
  errors?: Errors | undefined
}): SafeHtml {
  const { name, label } = options
  const error = options.errors?.[name]
  const p = parts(name, label, options.hint, error)
  return html`<div class="field${error ? ' invalid' : ''}">${p.error}<div class="check">
<input type="checkbox" id="${name}" name="${name}" value="on"${options.checked ? html` checked` : ''}${p.invalid}${p.described}>
<label for="${name}">${label}</label></div>${p.hint}</div>`
}

/** How the error summary opens: the frame (frame.ts) finds it in a page to put "Error: " in the title. */
export const ERROR_SUMMARY_OPENING = '<div class="error-summary" data-error-summary'
const OPENING = new SafeHtml(ERROR_SUMMARY_OPENING)

/**
 * The summary at the top of a failed form. Focus moves to it (`autofocus`, and the console's script),
 * so the keyboard starts there; the announcement is on an inner `role="alert"`, never on the focused
 * element, as in GOV.UK's error summary: a focused alert is read twice or races the focus. A reason
 * without a field to link to (`labels` has no label for it) is listed as plain text.
 */
export function errorSummary(errors: Errors | undefined, labels: Record<string, string>): SafeHtml | '' {
  const entries = Object.entries(errors ?? {})
  if (entries.length === 0) return ''
  return html`${OPENING} tabindex="-1" autofocus>
<div role="alert">
<h2 class="error-summary-title">There is a problem</h2>
<ul>${entries.map(([field, reason]) =>
    labels[field]
      ? html`<li><a href="#${field}">${labels[field]} ${reason}</a></li>`
      : html`<li>${reason}</li>`,
  )}</ul>
</div>
</div>`
}
