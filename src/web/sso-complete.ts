import { randomBytes } from 'node:crypto'
import type { ServiceContext } from '../context.js'
import { html, SafeHtml } from '../html.js'
import type { TypedApp } from '../http/typed-app.js'
import { PAGE_HEADERS, page } from './layout.js'

/**
 * The default hand-over page of single sign-on (TENANTRY_SSO_RETURN_URL unset; docs/sso.md). The token
 * arrives in the URL fragment, which browsers never send to a server; a small script takes it out of the
 * address bar, keeps it in sessionStorage for a front end on this origin, and shows who is signed in
 * (POST /v1/login with the token). The script runs under a per-response nonce; nothing else may.
 */
const SCRIPT = `
(async () => {
  const out = document.getElementById('status');
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  history.replaceState(null, '', location.pathname);
  if (!token) { out.textContent = 'No sign-in to complete. Start again from your login page.'; return; }
  sessionStorage.setItem('tenantry.token', token);
  const response = await fetch('/v1/login', { method: 'POST', headers: { authorization: 'Bearer ' + token } });
  if (!response.ok) { out.textContent = 'The sign-in could not be confirmed (' + response.status + ').'; return; }
  const login = (await response.json()).result;
  const tenant = login.tenants.find((t) => t.tenantId === params.get('tenantId'));
  out.textContent = 'Signed in as ' + login.username + (tenant ? ' to ' + tenant.tenantName : '') + '.';
  out.dataset.signedIn = login.username;
})();
`

export async function ssoPageRoutes(app: TypedApp, _ctx: ServiceContext): Promise<void> {
  app.get('/sso/complete', { schema: { hide: true } }, async (_request, reply) => {
    const nonce = randomBytes(16).toString('base64')
    const body = html`<h1>Single sign-on</h1>
<p id="status" role="status" aria-live="polite">Completing your sign-in…</p>
<noscript><p class="notice">This page needs JavaScript to hand your sign-in to the application.</p></noscript>
<script nonce="${nonce}">${new SafeHtml(SCRIPT)}</script>`
    return reply
      .headers({
        ...PAGE_HEADERS,
        'content-security-policy': `${PAGE_HEADERS['content-security-policy']}; script-src 'nonce-${nonce}'; connect-src 'self'`,
      })
      .send(page('Single sign-on', body))
  })
}
