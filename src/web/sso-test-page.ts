import { html, type SafeHtml } from '../html.js'
import type { SsoTest } from '../modules/sso/identity-providers.schemas.js'
import type { SsoTestPage } from '../modules/sso/sso.routes.js'
import { frame } from './kit/frame.js'

/**
 * The page a test sign-in's browser lands on (ACS or callback; docs/sso.md §5), in the page kit's frame
 * (docs/pages.md): what the provider asserted, in words, and that nobody was signed in. The sso module
 * answers with the report; this is its page. Every value is escaped (html.ts); the page loads nothing
 * and runs nothing, is never cached, and the same report is `GET …/identity-providers/{id}/test/{testId}`.
 * A test started with a `returnTo` (the console's result page) moves on there at once by a meta refresh,
 * with a link for a browser that does not follow it. Not a redirect: the answer came from the identity
 * provider's site, and a redirect would arrive there as that site's navigation, without the console's
 * SameSite=Strict session cookie; a navigation this page starts is this site's own.
 */
const HEADERS = {
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

export const ssoTestPage: SsoTestPage = (test: SsoTest, continueTo: string | null) => {
  const verdict =
    test.status === 'succeeded'
      ? html`<p role="status">The identity provider’s answer passed every check.
${test.memberFound ? 'This person has an accepted membership: a real sign-in would work.' : 'This person has no accepted membership in the tenant: a real sign-in would be refused.'}</p>`
      : html`<p role="alert">The identity provider’s answer was refused: ${test.error ?? 'no reason given'}.</p>`
  const attributes = test.attributes ?? {}
  const body = html`<h1>Test sign-in result</h1>
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
}`
  const head = continueTo ? html`<meta http-equiv="refresh" content="0; url=${continueTo}">` : undefined
  return { headers: HEADERS, body: frame({ title: 'Test sign-in result', head }, body) }
}
