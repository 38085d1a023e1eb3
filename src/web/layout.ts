import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import { type Brand, brandColour, DEFAULT_BRAND, html, SafeHtml } from '../html.js'
import { frame } from './kit/frame.js'

/**
 * The public pages' look (acceptance, password reset): plain HTML in the page kit's frame
 * (web/kit/frame.ts), no script, no external resource, readable without CSS, keyboard-usable with a
 * visible focus ring, and responsive. The brand's colour is the accent of light mode.
 */
function style(accent: string): string {
  return `
  :root { color-scheme: light dark; --accent: ${accent}; --error: #b91c1c; --muted: #555; }
  @media (prefers-color-scheme: dark) { :root { --accent: #93b4ff; --error: #ff8a80; --muted: #bbb; } }
  * { box-sizing: border-box; }
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.5; margin: 0;
    overflow-wrap: anywhere; }
  main { max-width: 32rem; margin: 3rem auto; padding: 0 1.25rem; }
  h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 1rem; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0 0 1.5rem; }
  dt { font-weight: 600; }
  dd { margin: 0; }
  .skip { position: absolute; left: -999px; }
  .field { margin: 0 0 1.1rem; }
  label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
  .hint { color: var(--muted); font-size: 0.9rem; margin: 0 0 0.3rem; }
  input { width: 100%; font: inherit; padding: 0.5rem 0.6rem; border: 2px solid #767676; border-radius: 0.3rem; }
  input[readonly] { border-style: dashed; }
  input[aria-invalid="true"] { border-color: var(--error); }
  .error-message { color: var(--error); font-weight: 600; margin: 0 0 0.3rem; }
  .error-summary { border: 3px solid var(--error); padding: 0.75rem 1rem; margin: 0 0 1.5rem; border-radius: 0.3rem; }
  .error-summary h2 { font-size: 1.1rem; margin: 0 0 0.5rem; }
  .error-summary ul { margin: 0; padding-left: 1.2rem; }
  .error-summary a { color: var(--error); }
  button { font: inherit; font-weight: 600; padding: 0.6rem 1.4rem; border: 0; border-radius: 0.3rem;
    background: var(--accent); color: #fff; cursor: pointer; }
  @media (prefers-color-scheme: dark) { button { color: #000; } }
  :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
  .notice { border-left: 4px solid var(--accent); padding: 0.25rem 0 0.25rem 1rem; }
`
}

/** The page's language and brand; today's defaults when absent. */
export interface PublicPageOptions {
  language?: string | undefined
  brand?: Brand | undefined
}

export function page(title: string, body: SafeHtml, options: PublicPageOptions = {}): string {
  const brand = options.brand ?? DEFAULT_BRAND
  return frame(
    {
      title,
      language: options.language,
      brand,
      // An empty icon of its own: without one the browser asks for /favicon.ico, which nothing serves.
      head: html`<link rel="icon" href="data:,"><style>${new SafeHtml(style(brandColour(brand)))}</style>`,
    },
    body,
  )
}

/**
 * Headers of every page: not cached (a link holds a token), never sent on as a Referer, not framed, and
 * no script or outside resource may load.
 */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; " +
    "frame-ancestors 'none'; base-uri 'none'",
} as const

/** The page a refusal of the service becomes ([status, html]); undefined: not a refusal this page shows. */
export type RefusalPage = (error: AppError) => [number, string] | undefined

/**
 * Runs a page handler with the page headers; the service's refusals become pages (a 429 keeps its
 * Retry-After), anything else is logged under `failure` and answered with `errorPage`.
 */
export async function renderPage(
  reply: FastifyReply,
  request: FastifyRequest,
  handler: () => Promise<[number, string]>,
  pages: { refusal: RefusalPage; error: (requestId: string) => string; failure: string },
): Promise<FastifyReply> {
  reply.headers(PAGE_HEADERS)
  try {
    const [status, body] = await handler()
    return reply.code(status).send(body)
  } catch (error) {
    const refused = error instanceof AppError ? pages.refusal(error) : undefined
    if (refused) {
      const retryAfter = (error as AppError).headers?.['retry-after']
      if (retryAfter) reply.header('retry-after', retryAfter)
      return reply.code(refused[0]).send(refused[1])
    }
    request.log.error({ err: error }, pages.failure)
    return reply.code(500).send(pages.error(request.id))
  }
}

/** The page of a refusal for too many attempts: what happened, and when to try again (Retry-After). */
export function tooManyAttemptsPage(what: string, retryAfterSeconds: string | undefined): string {
  const minutes = retryAfterSeconds ? Math.max(1, Math.ceil(Number(retryAfterSeconds) / 60)) : undefined
  return page(
    'Too many attempts',
    html`<h1>Too many attempts</h1>
<p role="alert">${what}
${minutes ? html`Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` : 'Try again later.'}</p>`,
  )
}

/** The page of a failure (a 500): what could not be done, and the reference to quote. */
export function failurePage(what: string, requestId: string): string {
  return page(
    'Something went wrong',
    html`<h1>Something went wrong</h1>
<p role="alert">${what} Please try again in a moment.</p>
<p>If it keeps happening, quote this reference: <code>${requestId}</code>.</p>`,
  )
}
