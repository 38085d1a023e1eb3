import { html, type SafeHtml } from '../../html.js'
import type { SsoTest } from './identity-providers.schemas.js'

/**
 * The page a test sign-in's browser lands on (ACS or callback): what the provider asserted, in words,
 * and that nobody was signed in. Every value is escaped (html.ts); the page loads nothing and runs
 * nothing, is never cached, and the same report is `GET …/identity-providers/{id}/test/{testId}`.
 * A test started with a `returnTo` (the console's result page, docs/sso.md §5) moves on there at once
 * by a meta refresh, with a link for a browser that does not follow it. Not a redirect: the answer came
 * from the identity provider's site, and a redirect would arrive there as that site's navigation, without
 * the console's SameSite=Strict session cookie; a navigation this page starts is this site's own.
 */
export const TEST_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const

function attributeRows(attributes: Record<string, unknown>): SafeHtml[] {
  return Object.entries(attributes).map(
    ([name, value]) =>
      html`<dt>${name}</dt><dd>${Array.isArray(value) ? value.map(String).join(', ') : typeof value === 'object' ? JSON.stringify(value) : String(value)}</dd>`,
  )
}

export function renderSsoTestPage(test: SsoTest, continueTo: string | null = null): string {
  const verdict =
    test.status === 'succeeded'
      ? html`<p role="status">The identity provider’s answer passed every check.
${test.memberFound ? 'This person has an accepted membership: a real sign-in would work.' : 'This person has no accepted membership in the tenant: a real sign-in would be refused.'}</p>`
      : html`<p role="alert">The identity provider’s answer was refused: ${test.error ?? 'no reason given'}.</p>`
  const attributes = test.attributes ?? {}
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Test sign-in result · Tenantry</title>
${continueTo ? html`<meta http-equiv="refresh" content="0; url=${continueTo}">` : ''}
</head>
<body>
<main>
<h1>Test sign-in result</h1>
${continueTo ? html`<p><a href="${continueTo}">Continue to the page the test was started from</a></p>` : ''}
${verdict}
<p>This was a test: nobody was signed in, and no account or membership was created.</p>
<dl>
<dt>E-mail</dt><dd>${test.email ?? 'none asserted'}</dd>
${test.nameId ? html`<dt>NameID</dt><dd>${test.nameId}</dd>` : ''}
</dl>
${
  Object.keys(attributes).length > 0
    ? html`<h2>Attributes the provider sent</h2>
<dl>${attributeRows(attributes)}</dl>`
    : ''
}
</main>
</body>
</html>
`.value
}
