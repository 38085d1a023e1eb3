import { html, type SafeHtml } from '../../../html.js'

/** The signed-in person as the layout needs them: a name for the header and the areas they may use. */
export interface Viewer {
  name: string
  username: string
  /** May read platform users (VIEW_ALL_USERS or MANAGE_ALL_USERS somewhere). */
  users: boolean
  /** May read the platform's audit events (VIEW_AUDIT_LOG in the platform role). */
  audit: boolean
  signOut: { formId: string; formToken: string }
}

export type Area = 'tenants' | 'users' | 'audit' | 'none'

export interface PageOptions {
  title: string
  nonce: string
  viewer?: Viewer | undefined
  area?: Area
  /** A breadcrumb trail: [text, href] pairs, the last one the current page (no link). */
  crumbs?: [string, string | undefined][]
}

/**
 * The one frame of every console page: a skip link, the header with the navigation the person may use
 * ("Tenants", "Users", "Audit", "Sign out"), breadcrumbs, and the main region. Only the console's own stylesheet,
 * icon and nonce script load.
 */
export function consolePage(options: PageOptions, body: SafeHtml): string {
  const { viewer, area = 'none', nonce } = options
  const current = (name: Area) => (area === name ? html` aria-current="page"` : '')
  const nav = viewer
    ? html`<nav aria-label="Console"><ul>
<li><a href="/console/tenants"${current('tenants')}>Tenants</a></li>
${viewer.users ? html`<li><a href="/console/users"${current('users')}>Users</a></li>` : ''}
${viewer.audit ? html`<li><a href="/console/audit"${current('audit')}>Audit</a></li>` : ''}
</ul></nav>
<span class="person">${viewer.name}</span>
<form method="post" action="/console/sign-out">
<input type="hidden" name="formId" value="${viewer.signOut.formId}">
<input type="hidden" name="formToken" value="${viewer.signOut.formToken}">
<button type="submit" class="link-button">Sign out</button>
</form>`
    : ''
  const crumbs = options.crumbs?.length
    ? html`<nav aria-label="Breadcrumb"><ol class="breadcrumbs">${options.crumbs.map(([text, href]) =>
        href ? html`<li><a href="${href}">${text}</a></li>` : html`<li aria-current="page">${text}</li>`,
      )}</ol></nav>`
    : ''
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${options.title} · Tenantry console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
</head>
<body>
<a class="skip" href="#main">Skip to main content</a>
<header class="top"><div class="bar">
<a class="brand" href="/console">Tenantry console</a>
${nav}
</div></header>
<main id="main" tabindex="-1">
${crumbs}
${body}
</main>
<script nonce="${nonce}" src="/console/assets/console.js"></script>
</body>
</html>
`.value
}
