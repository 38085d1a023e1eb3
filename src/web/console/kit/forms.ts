import { html, type SafeHtml } from '../../../html.js'
import type { FormToken } from './form-token.js'

/**
 * The console's own form parts: the hidden fields of its CSRF form tokens, one-button action forms, and
 * reading a posted field. The fields, the error summary and their types are the page kit's
 * (web/kit/forms.ts, docs/pages.md); the three below are named here too for the console files that
 * import them from this one.
 */
export { type Choice, type Errors, selectField } from '../../kit/forms.js'

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
