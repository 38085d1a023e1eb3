import { createHmac, randomBytes } from 'node:crypto'
import type { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ServiceContext } from '../../../context.js'
import { html, type SafeHtml } from '../../../html.js'
import { type ApiClient, type ApiStream, apiClient, apiStream } from '../api/client.js'
import type { ConsoleSession, SessionStore } from '../session/session-store.js'
import { type FormToken, FormTokens, sameOrigin } from './form-token.js'
import { type Login, RequestIdentity } from './identity.js'
import { consolePage, type PageOptions, type Viewer } from './layout.js'
import { personFullName } from './readable.js'

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
  /** What this session's sealed values are bound to (kit/sealed.ts): the session's key. */
  sessionBinding: string
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

/** A page's request as far as the console got with it: its nonce, its session, the person. */
interface Admitted {
  nonce: string
  session?: ConsoleSession
  identity?: RequestIdentity
  signed?: Signed
}

/**
 * The console's request plumbing: the headers of docs/console.md on every response (a fresh script
 * nonce each), the session cookie → the person's API client, and the CSRF checks of every POST (origin
 * and form token) before anything is sent to the API.
 */
export class ConsolePages {
  readonly tokens: FormTokens
  readonly secure: boolean
  readonly #admitted = new WeakMap<FastifyRequest, Admitted>()

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

  /**
   * The hook of every page for a signed-in person (preValidation: the body is parsed, not yet checked
   * against the route's schema): the session → the person and their API client, and on a POST the CSRF
   * checks. Without a live session, the sign-in page (then back here). The route's inputs are checked
   * after this, so a refused one is drawn in the person's own frame (kit/error-pages.ts).
   */
  async admit(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const nonce = this.nonce(reply)
    const admitted: Admitted = { nonce }
    this.#admitted.set(request, admitted)
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE)
    const session = cookie ? await this.sessions.find(cookie, this.ctx.clock.now()) : undefined
    if (!session) return this.signInAgain(request, reply)
    admitted.session = session
    let formId = ''
    if (request.method === 'POST') {
      const verified = sameOrigin(request, this.ctx.config.publicUrl)
        ? this.tokens.verify(session.idHash, fieldsOf(request.body))
        : undefined
      if (!verified) return reply.code(403).send(this.refusedForm(nonce))
      formId = verified
    }
    // The person as the session keeps them, asked of the API only when it can have changed; a token the
    // API refuses on any call ends the session there (kit/identity.ts, the error handler).
    const identity = new RequestIdentity(this.sessions, session, this.ctx.clock.now())
    admitted.identity = identity
    const api = apiClient(this.app, session.token, request.ip, identity.watch, request.headers['user-agent'])
    const login = await identity.read(api)
    const form = () => this.tokens.issue(session.idHash)
    const viewer: Viewer = {
      name: personFullName({ ...login, email: login.username }) ?? login.username,
      username: login.username,
      users: mayReadUsers(login),
      audit: login.platformPermissions.includes('VIEW_AUDIT_LOG'),
      signOut: form(),
    }
    admitted.signed = {
      api,
      login,
      viewer,
      form,
      formId,
      sessionBinding: session.idHash,
      page: (options, body) => consolePage({ ...options, nonce, viewer }, body),
      stream: (url) => apiStream(this.app, session.token, request.ip, url, identity.watch),
    }
    return undefined
  }

  /** The person the hook admitted to this request; undefined before, or outside the signed-in pages. */
  signedOf(request: FastifyRequest): Signed | undefined {
    return this.#admitted.get(request)?.signed
  }

  /** The session the hook found for this request (its token: kit/step-up.ts asks the API with it). */
  sessionOf(request: FastifyRequest): ConsoleSession | undefined {
    return this.#admitted.get(request)?.session
  }

  /** This response's script nonce: the one the hook set, or a fresh one. */
  nonceOf(request: FastifyRequest, reply: FastifyReply): string {
    return this.#admitted.get(request)?.nonce ?? this.nonce(reply)
  }

  /**
   * Back to the sign-in page (then back here, after a GET); a session whose token the API refused is
   * deleted first.
   */
  async signInAgain(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const session = this.#admitted.get(request)?.session
    if (session) await this.sessions.delete(session.idHash)
    const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : ''
    return reply.header('set-cookie', this.clearedCookie()).redirect(`/console/sign-in${next}`, 303)
  }

  /** A page for the signed-in person the hook admitted: the handler's result, sent. */
  async signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    handler: (signed: Signed) => Promise<PageResult>,
  ): Promise<FastifyReply> {
    const signed = this.signedOf(request)
    if (!signed) throw new Error(`${request.url} is a signed-in page outside the signed-in area`)
    const result = await handler(signed)
    await this.settle(request)
    return this.send(reply, result)
  }

  /** Before a signed-in page's answer goes out: an identity that can have changed is read again next time. */
  async settle(request: FastifyRequest): Promise<void> {
    await this.#admitted.get(request)?.identity?.settle()
  }

  send(reply: FastifyReply, result: PageResult): FastifyReply {
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

/** A parsed form's fields as the form token reads them (a body that is no object has none). */
function fieldsOf(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null ? Object.fromEntries(Object.entries(body)) : {}
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
