import { readFileSync } from 'node:fs'

/**
 * The console's own stylesheet, icon and one small script, served by the app (no build step, no outside
 * resource; the CSP allows styles from 'self' and scripts only by nonce).
 */
export const STYLESHEET = `
:root { color-scheme: light; --ink: #0b0c0c; --accent: #1d4ed8; --error: #b3261e; --muted: #505a5f;
  --line: #b1b4b6; --bg-soft: #f3f2f1; --ok: #00703c; }
* { box-sizing: border-box; }
/* What a page draws hidden stays hidden whatever its class lays out (a passkey's controls without JavaScript). */
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.5; color: var(--ink);
  background: #fff; overflow-wrap: anywhere; }
a { color: var(--accent); }
a:visited { color: #4c2c92; }
:focus-visible { outline: 3px solid #fd0; outline-offset: 0; box-shadow: 0 0 0 5px var(--ink); }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: #fd0; padding: 0.5rem; z-index: 2; }
header.top { background: var(--ink); color: #fff; }
header.top .bar { max-width: 72rem; margin: 0 auto; padding: 0.6rem 1rem; display: flex; flex-wrap: wrap;
  gap: 0.5rem 1.5rem; align-items: center; }
header.top .brand { color: #fff; font-weight: 700; font-size: 1.15rem; text-decoration: none; margin-right: auto; }
header.top nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; margin: 0; padding: 0; }
header.top nav a { color: #fff; font-weight: 600; }
header.top nav a[aria-current="page"] { text-decoration-thickness: 3px; }
header.top form { margin: 0; }
header.top .person { color: #fff; font-size: 0.9rem; }
.link-button { background: none; border: 0; padding: 0; color: #fff; font: inherit; font-weight: 600;
  text-decoration: underline; cursor: pointer; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.9rem; line-height: 1.2; margin: 0 0 1rem; }
h2 { font-size: 1.35rem; margin: 1.75rem 0 0.75rem; }
.breadcrumbs { font-size: 0.95rem; margin: 0 0 1rem; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem; }
.breadcrumbs li + li::before { content: "›"; margin-right: 0.25rem; color: var(--muted); }
.field { margin: 0 0 1.25rem; max-width: 36rem; }
.field.invalid { border-left: 5px solid var(--error); padding-left: 0.9rem; }
label, legend { display: block; font-weight: 700; margin-bottom: 0.25rem; }
fieldset { border: 0; margin: 0 0 1.25rem; padding: 0; }
.hint { color: var(--muted); margin: 0 0 0.35rem; }
input[type=text], input[type=email], input[type=password], input[type=search], select, textarea {
  width: 100%; font: inherit; padding: 0.45rem 0.55rem; border: 2px solid var(--ink); border-radius: 0; background: #fff; color: var(--ink); }
textarea { min-height: 8rem; }
.invalid input, .invalid select, .invalid textarea { border-color: var(--error); }
.check { display: flex; gap: 0.5rem; align-items: flex-start; margin: 0.25rem 0; }
.check input { width: 1.4rem; height: 1.4rem; margin: 0.1rem 0 0; flex: none; }
.check label { font-weight: 400; margin: 0; }
.error-message { color: var(--error); font-weight: 700; margin: 0 0 0.35rem; }
.error-summary { border: 5px solid var(--error); padding: 1rem; margin: 0 0 1.5rem; max-width: 42rem; }
.error-summary h2 { margin: 0 0 0.5rem; font-size: 1.2rem; }
.error-summary ul { margin: 0; padding-left: 1.2rem; }
.error-summary a { color: var(--error); font-weight: 700; }
button, .button { display: inline-block; font: inherit; font-weight: 700; padding: 0.5rem 1.1rem; border: 0;
  border-radius: 0; background: var(--ok); color: #fff; cursor: pointer; text-decoration: none; box-shadow: 0 2px 0 #002d18; }
.button:visited { color: #fff; }
button.secondary, .button.secondary { background: var(--bg-soft); color: var(--ink); box-shadow: 0 2px 0 #929191; }
button.warning, .button.warning { background: var(--error); box-shadow: 0 2px 0 #55150f; }
.button.warning:visited { color: #fff; }
button:disabled { opacity: 0.6; cursor: not-allowed; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: center; margin: 1rem 0; }
.inline { display: inline; margin: 0; }
.notice { border-left: 5px solid var(--accent); padding: 0.5rem 1rem; margin: 0 0 1.5rem; background: var(--bg-soft); }
.notice.success { border-color: var(--ok); }
.notice.warning { border-color: var(--error); }
dl.summary { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: 0.4rem 1.5rem; margin: 0 0 1.5rem; }
dl.summary dt { font-weight: 700; }
dl.summary dd { margin: 0; }
.table-wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; width: 100%; margin: 0 0 1.5rem; }
th, td { text-align: left; padding: 0.5rem 0.6rem 0.5rem 0; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 700; }
.tag { display: inline-block; padding: 0 0.4rem; font-weight: 700; font-size: 0.9rem; background: var(--bg-soft); }
.tag.failed { background: #f6d7d2; color: #2a0b06; }
.tag.sent, .tag.accepted, .tag.enabled { background: #cce2d8; color: #005a30; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding: 0; }
ul.tree ul { padding-left: 1.5rem; border-left: 2px solid var(--line); margin-left: 0.6rem; }
ul.tree li { margin: 0.3rem 0; }
.node { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; align-items: baseline; }
.disclosure { font-size: 0.9rem; }
.muted { color: var(--muted); }
/* An identifier (an action such as tenant.updated) never breaks inside a word; a table too wide for the
   screen scrolls inside its .table-wrap, never the page. */
.nowrap { white-space: nowrap; overflow-wrap: normal; word-break: keep-all; }
ul.plain { list-style: none; padding: 0; }
.links { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: 0.5rem 1rem; }
.links a { font-weight: 700; }
form.search { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-end; margin: 0 0 1rem; }
form.search .field { margin: 0; flex: 1 1 14rem; }
/* A button that reads as a link: another way of doing the same thing ("Use a recovery code"). */
.text-button { background: none; border: 0; box-shadow: none; padding: 0; color: var(--accent); font: inherit;
  font-weight: 400; text-decoration: underline; cursor: pointer; }
.other-ways li { margin: 0.5rem 0; }
input.code { max-width: 14rem; letter-spacing: 0.1em; }
.passkey-status:empty { display: none; }
/* The QR code of an authenticator app: drawn by the API as SVG, on white with its quiet zone. */
.qr { width: 13rem; height: 13rem; background: #fff; border: 1px solid var(--line); margin: 0 0 1rem; }
.qr svg { display: block; width: 100%; height: 100%; }
.secret-key { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 1.1rem;
  letter-spacing: 0.08em; word-break: break-all; }
ol.codes { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 1.15rem;
  columns: 2 10rem; padding-left: 2.75rem; margin: 0 0 1.5rem; }
@media (max-width: 40rem) {
  h1 { font-size: 1.5rem; }
  dl.summary { grid-template-columns: 1fr; }
  dl.summary dd { margin-bottom: 0.5rem; }
  table.stack thead { position: absolute; left: -999px; }
  table.stack tr { display: block; border-bottom: 2px solid var(--line); padding: 0.5rem 0; }
  table.stack td { display: block; border: 0; padding: 0.15rem 0; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; font-weight: 700; }
}
`

export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b0c0c"/><path d="M8 9h16v4h-6v12h-4V13H8z" fill="#fff"/></svg>`

/**
 * The one enhancement script: moves focus to the error summary (or the first error) after a failed
 * submit and, from a link of the summary, into its field, disables a form's submit button once pressed (a double click then sends once; without
 * JavaScript the form's Idempotency-Key makes a second submit show the first result), and shows each
 * `<time data-local>` (kit/time.ts) in the reader's own time zone, its title keeping the UTC value.
 */
export const ENHANCE_SCRIPT = `
(() => {
  const summary = document.querySelector('[data-error-summary]');
  if (summary) {
    summary.focus();
    // A link of the summary puts the focus in its field, not only the page at it (GOV.UK's summary).
    summary.addEventListener('click', (event) => {
      const link = event.target.closest('a[href^="#"]');
      const field = link && document.getElementById(link.getAttribute('href').slice(1));
      if (field && typeof field.focus === 'function') { event.preventDefault(); field.focus(); }
    });
  }
  const local = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric',
    hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
  for (const time of document.querySelectorAll('time[data-local]')) {
    const instant = new Date(time.dateTime);
    if (!Number.isNaN(instant.getTime())) time.textContent = local.format(instant);
  }
  for (const form of document.querySelectorAll('form[method="post"]')) {
    form.addEventListener('submit', () => {
      setTimeout(() => { for (const b of form.querySelectorAll('button[type="submit"]')) b.disabled = true; }, 0);
    });
  }
})();
`

/**
 * The passkey script (docs/console.md "Second factors"), loaded after @simplewebauthn/browser's bundle
 * (served as /console/assets/webauthn.js, its global SimpleWebAuthnBrowser) on the pages that offer a
 * passkey. A form `data-passkey="authenticate|register"` carries the API's options in `data-options`;
 * its controls are drawn hidden (a page without JavaScript says a passkey needs it) and shown here, as
 * is any element marked `data-needs-webauthn` (the security page's "Add a passkey"). The
 * button asks the browser for the passkey, puts the answer in the form's `webauthn` field and posts the
 * form — the console sends it to the API, which decides. A refusal or a cancelled prompt is said in the
 * form's status line, and the button works again.
 */
export const PASSKEY_SCRIPT = `
(() => {
  const lib = window.SimpleWebAuthnBrowser;
  const supported = Boolean(lib && lib.browserSupportsWebAuthn());
  for (const element of document.querySelectorAll('[data-needs-webauthn]')) element.hidden = !supported;
  for (const form of document.querySelectorAll('form[data-passkey]')) {
    const controls = form.querySelector('[data-passkey-controls]');
    const status = form.querySelector('[data-passkey-status]');
    const start = form.querySelector('[data-passkey-start]');
    const say = (text) => { if (status) status.textContent = text; };
    if (!supported || !start) {
      say('This browser cannot use passkeys.');
      continue;
    }
    if (controls) controls.hidden = false;
    start.addEventListener('click', async () => {
      start.disabled = true;
      say('Follow your browser’s prompt to use your passkey.');
      try {
        const optionsJSON = JSON.parse(form.dataset.options || '{}');
        const response = form.dataset.passkey === 'register'
          ? await lib.startRegistration({ optionsJSON })
          : await lib.startAuthentication({ optionsJSON });
        form.elements.webauthn.value = JSON.stringify(response);
        say('Checking your passkey…');
        form.submit();
      } catch (error) {
        start.disabled = false;
        const why = error && error.message ? ': ' + error.message : '';
        say('The passkey was not used' + why + '. Try again, or use another way.');
      }
    });
  }
})();
`

/**
 * @simplewebauthn/browser's own browser bundle (its UMD build, which sets the global
 * SimpleWebAuthnBrowser), read once from the installed package: the console serves it as
 * /console/assets/webauthn.js, so the passkey pages load nothing from another site. The package exports
 * only its entry, so the bundle is found beside it.
 */
export function webauthnBrowserBundle(): string {
  const entry = import.meta.resolve('@simplewebauthn/browser')
  return readFileSync(new URL('../dist/bundle/index.umd.min.js', entry), 'utf8')
}
