import { createHmac, randomBytes } from 'node:crypto'
import type { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { paths } from '../../../../generated/openapi.js'
import type { ServiceContext } from '../../../context.js'
import { html, type SafeHtml } from '../../../html.js'
import { type ApiClient, type ApiError, type ApiStream, apiClient, apiStream } from '../api/client.js'
import type { SessionStore } from '../session/session-store.js'
import { type FormToken, FormTokens, sameOrigin } from './form-token.js'
import { consolePage, type PageOptions, type Viewer } from './layout.js'
import { personFullName } from './readable.js'

export type Login = paths['/v1/login']['post']['responses'][200]['content']['application/json']['result']

/** What every console page handler gets: the API as the signed-in person, and page helpers. */
export interface Signed {
  api: ApiClient
  login: Login
  viewer: Viewer
  /** A fresh form: id (Idempotency-Key) and CSRF token bound to this session. */
  form(): FormToken
  /** The whole page in the console layout, with this response's nonce. */
  page(options: Omit<PageOptions, 'nonce' | 'viewer'>, body: SafeHtml): string
  /** On a POST: the verified form id, the form's Idempotency-Key. */
  formId: string
  /** A GET of the API as this person, its body a stream (an export of any length, never buffered). */
  stream(url: string): Promise<ApiStream>
}

/** A file the browser saves (a CSV export), streamed through as the API sends it. */
export interface Download {
  type: string
  filename: string
  body: Readable
}

export type PageResult = [status: number, body: string] | { redirect: string } | { download: Download }

export const SESSION_COOKIE = 'tenantry_console'

/**
 * The console's request plumbing: the headers of section 17 on every response (a fresh script nonce
 * each), the session cookie → the person's API client, and the CSRF checks of every POST (origin and
 * form token) before anything is sent to the API.
 */
export class ConsolePages {
  readonly tokens: FormTokens
  readonly secure: boolean

  constructor(
    readonly app: FastifyInstance,
    readonly ctx: ServiceContext,
    readonly sessions: SessionStore,
  ) {
    // A key of its own, derived from the secret key: a form token is no use anywhere else.
    this.tokens = new FormTokens(
      createHmac('sha256', ctx.keys.secretKey).update('console form tokens').digest(),
    )
    this.secure = ctx.config.publicUrl.startsWith('https:')
  }

  nonce(reply: FastifyReply): string {
    const nonce = randomBytes(16).toString('base64')
    reply.headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'same-origin',
      'x-content-type-options': 'nosniff',
      'content-security-policy':
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'self'; img-src 'self'; ` +
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    })
    return nonce
  }

  sessionCookie(value: string, maxAgeSeconds: number): string {
    return `${SESSION_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${
      this.secure ? '; Secure' : ''
    }`
  }

  clearedCookie(): string {
    return `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0${this.secure ? '; Secure' : ''}`
  }

  /** A page for a signed-in person; without a live session, the sign-in page (then back here). */
  async signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    handler: (signed: Signed) => Promise<PageResult>,
  ): Promise<FastifyReply> {
    const nonce = this.nonce(reply)
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE)
    const session = cookie ? await this.sessions.find(cookie, this.ctx.clock.now()) : undefined
    const back = () => {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : ''
      return reply.header('set-cookie', this.clearedCookie()).redirect(`/console/sign-in${next}`, 303)
    }
    if (!session) return back()
    let formId = ''
    if (request.method === 'POST') {
      const form = (request.body ?? {}) as Record<string, unknown>
      const verified = sameOrigin(request, this.ctx.config.publicUrl)
        ? this.tokens.verify(session.idHash, form)
        : undefined
      if (!verified) return reply.code(403).send(this.refusedForm(nonce))
      formId = verified
    }
    const api = apiClient(this.app, session.token, request.ip)
    const { data, response } = await api.POST('/v1/login')
    if (response.status === 401) {
      // The token is refused: expired, the person disabled, or their password changed. The session ends.
      await this.sessions.delete(session.idHash)
      return back()
    }
    if (!data) throw new Error(`POST /v1/login answered ${response.status}`)
    const login = data.result
    const form = () => this.tokens.issue(session.idHash)
    const viewer: Viewer = {
      name: personFullName({ ...login, email: login.username }) ?? login.username,
      username: login.username,
      users: mayReadUsers(login),
      audit: login.platformPermissions.includes('VIEW_AUDIT_LOG'),
      signOut: form(),
    }
    const signed: Signed = {
      api,
      login,
      viewer,
      form,
      formId,
      page: (options, body) => consolePage({ ...options, nonce, viewer }, body),
      stream: (url) => apiStream(this.app, session.token, request.ip, url),
    }
    const result = await handler(signed)
    if ('redirect' in result) return reply.redirect(result.redirect, 303)
    if ('download' in result)
      return reply
        .headers({
          'content-type': result.download.type,
          'content-disposition': `attachment; filename="${result.download.filename}"`,
        })
        .send(result.download.body)
    return reply.code(result[0]).send(result[1])
  }

  refusedForm(nonce: string): string {
    return consolePage(
      { title: 'Form not accepted', nonce },
      html`<h1>This form could not be accepted</h1>
<p role="alert">It did not come from a page of this console, or it is too old. Nothing was changed.</p>
<p><a href="/console">Go back to the console</a> and try again.</p>`,
    )
  }
}

export function mayReadUsers(login: Login): boolean {
  const reads = (p: string[]) => p.includes('VIEW_ALL_USERS') || p.includes('MANAGE_ALL_USERS')
  return reads(login.platformPermissions) || login.tenants.some((t) => reads(t.tenantPermissions))
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=')
    if (key === name) return value.join('=') || undefined
  }
  return undefined
}

/** The page of a refusal the API answered (403, 404, …): its message, visibly, with its status. */
export function refusalPage(signed: Signed, error: ApiError, title = 'Not allowed'): PageResult {
  const heading = error.code === 404 ? 'Not found' : error.code === 403 ? title : 'That did not work'
  return [
    error.code >= 400 && error.code < 500 ? error.code : 502,
    signed.page(
      { title: heading },
      html`<h1>${heading}</h1>
<div class="notice warning" role="alert"><p>${error.message}</p></div>
<p><a href="/console/tenants">Back to the tenants</a></p>`,
    ),
  ]
}

/** The "changed meanwhile" page of a stale edit (412 from If-Match): nothing was overwritten. */
export function changedMeanwhilePage(signed: Signed, what: string, href: string): PageResult {
  // 200, not 409: the page is the answer the person needs, and the browser then reports no failed load.
  return [
    200,
    signed.page(
      { title: 'Changed meanwhile' },
      html`<h1>This ${what} was changed meanwhile</h1>
<div class="notice warning" role="alert"><p>Someone else saved a change after you opened the form, so your
changes were not saved and nothing was overwritten.</p></div>
<p><a href="${href}">Open the ${what} again</a> to see the current values and make your change there.</p>`,
    ),
  ]
}

/**
 * A refused write as form errors: the API's `attribute` (field → reason) on the form's fields, renamed
 * where the form asks differently; a reason without a field goes to the summary.
 */
export function formErrorsOf(error: ApiError, rename: Record<string, string> = {}): Record<string, string> {
  const errors: Record<string, string> = {}
  for (const [field, reason] of Object.entries(error.attribute ?? {})) errors[rename[field] ?? field] = reason
  if (Object.keys(errors).length === 0) errors._ = error.message
  return errors
}

/**
 * What the person may do in a tenant, as far as the layout needs to know which controls to offer: the
 * platform role's permissions and those of memberships in the tenant or an ancestor (the API decides).
 */
export function permissionsIn(signed: Signed, tenantAndAncestors: string[]): Set<string> {
  const permissions = new Set<string>(signed.login.platformPermissions)
  for (const m of signed.login.tenants) {
    if (tenantAndAncestors.includes(m.tenantId)) for (const p of m.tenantPermissions) permissions.add(p)
  }
  return permissions
}
