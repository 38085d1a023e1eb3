import { type Brand, DEFAULT_BRAND, html, type SafeHtml } from '../../../html.js'
import { frame } from '../../kit/frame.js'

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

export type Area = 'tenants' | 'users' | 'audit' | 'security' | 'none'

export interface PageOptions {
  /** The page's own title: the page kit adds "Error: " when the page shows errors, and the site's name. */
  title: string
  nonce: string
  viewer?: Viewer | undefined
  area?: Area
  /** A breadcrumb trail: [text, href] pairs, the last one the current page (no link). */
  crumbs?: [string, string | undefined][]
  /** Scripts of the console's own this page loads besides console.js (the passkey's), under its nonce. */
  scripts?: string[] | undefined
  /** The page's language and brand (web/kit/frame.ts); today's defaults when absent. */
  language?: string | undefined
  brand?: Brand | undefined
}

/**
 * A console page in the page kit's frame (web/kit/frame.ts): a skip link, the header with the brand and
 * the navigation the person may use ("Tenants", "Users", "Audit", their own "Security", "Sign out"), breadcrumbs, the main
 * region. Only the console's own stylesheet, icon and nonce script load.
 */
export function consolePage(options: PageOptions, body: SafeHtml): string {
  const { viewer, area = 'none', nonce } = options
  const brand = options.brand ?? DEFAULT_BRAND
  const site = `${brand.name} console`
  const current = (name: Area) => (area === name ? html` aria-current="page"` : '')
  const nav = viewer
    ? html`<nav aria-label="Console"><ul>
<li><a href="/console/tenants"${current('tenants')}>Tenants</a></li>
${viewer.users ? html`<li><a href="/console/users"${current('users')}>Users</a></li>` : ''}
${viewer.audit ? html`<li><a href="/console/audit"${current('audit')}>Audit</a></li>` : ''}
<li><a href="/console/security"${current('security')}>Security</a></li>
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
  return frame(
    {
      title: options.title,
      language: options.language,
      brand,
      site,
      head: html`<link rel="stylesheet" href="/console/assets/console.css">
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">`,
      top: html`<a class="skip" href="#main">Skip to main content</a>
<header class="top"><div class="bar">
<a class="brand" href="/console">${site}</a>
${nav}
</div></header>`,
      end: html`<script nonce="${nonce}" src="/console/assets/console.js"></script>${(
        options.scripts ?? []
      ).map(
        (src) => html`
<script nonce="${nonce}" src="${src}"></script>`,
      )}`,
    },
    html`${crumbs}
${body}`,
  )
}
