import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

/**
 * CSRF defence of every state-changing console request (docs/console.md "CSRF"), two independent checks:
 * - the origin: the browser's Origin (or, lacking it, Referer) must be this service — the public URL's
 *   origin or the origin the request itself was addressed to;
 * - a per-form token: every form carries a fresh random form id and an HMAC of it bound to the session
 *   (`formId`, `formToken`), which a page on another site cannot read or make.
 * The form id doubles as the form's Idempotency-Key, so a double submit creates once.
 * Own code rather than @fastify/csrf-protection: the plugin keeps one secret per session in a cookie or
 * session store and gives one token per session; a per-form id that is also the idempotency key is the
 * same HMAC in a dozen lines.
 */
export interface FormToken {
  formId: string
  formToken: string
}

export class FormTokens {
  constructor(private readonly key: Buffer) {}

  /**
   * A new form: its id and token, bound to the session — before sign-in, to the browser's own random
   * value (session/browser-binding.ts). Never to nothing: a token bound to a constant would be one token
   * for every browser, replayable by anyone who fetched a page.
   */
  issue(sessionBinding: string): FormToken {
    if (!sessionBinding) throw new Error('A form token must be bound to a session or a browser')
    const formId = randomBytes(18).toString('base64url')
    return { formId, formToken: this.#mac(sessionBinding, formId) }
  }

  /**
   * The token of a form id already issued and verified: a form re-sent by the console itself on the
   * person's behalf (kit/step-up.ts carries on an action under the confirming form's id).
   */
  tokenFor(sessionBinding: string, formId: string): FormToken {
    if (!sessionBinding) throw new Error('A form token must be bound to a session or a browser')
    return { formId, formToken: this.#mac(sessionBinding, formId) }
  }

  verify(sessionBinding: string, form: Record<string, unknown>): string | undefined {
    const formId = typeof form.formId === 'string' ? form.formId : ''
    const token = typeof form.formToken === 'string' ? form.formToken : ''
    if (!sessionBinding) return undefined
    if (!/^[A-Za-z0-9_-]{24}$/.test(formId)) return undefined
    const expected = Buffer.from(this.#mac(sessionBinding, formId))
    const given = Buffer.from(token)
    return given.length === expected.length && timingSafeEqual(given, expected) ? formId : undefined
  }

  #mac(sessionBinding: string, formId: string): string {
    return createHmac('sha256', this.key)
      .update(`console-form\n${sessionBinding}\n${formId}`)
      .digest('base64url')
  }
}

/** Whether a state-changing request comes from a page of this service. */
export function sameOrigin(request: FastifyRequest, publicUrl: string): boolean {
  const source = firstHeader(request.headers.origin) ?? originOf(firstHeader(request.headers.referer))
  if (!source || source === 'null') return false
  const allowed = [new URL(publicUrl).origin]
  const host = firstHeader(request.headers.host)
  if (host) allowed.push(`${request.protocol}://${host}`)
  return allowed.includes(source)
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}
