import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../../errors.js'
import { html, type SafeHtml } from '../../../html.js'
import { drainRequestBody } from '../../../http/drain.js'
import { StepUpRequired, TokenRefused } from '../api/client.js'
import { NOT_FOUND } from './inputs.js'
import { consolePage } from './layout.js'
import type { ConsolePages, PageResult } from './pages.js'
import { Refusal, refusalPage, refusalResult } from './refusals.js'
import { askStepUp } from './step-up.js'

/**
 * The console's one error handler (docs/console.md "Inputs and refusals"): whatever a console request fails with
 * becomes a page in the console's frame, never the API's JSON —
 * - a path id the route's schema refuses: "Not found" (404), no API call made;
 * - a form or query string the schema refuses: the 400 page naming each field and what is wrong;
 * - an API refusal a page threw (kit/refusals.ts): the form again, "changed meanwhile", or its page;
 * - a token the API refused: the session ends, and the sign-in page;
 * - an operation the API asks a second factor for (`reauthentication_required`): the step-up page, which
 *   then carries on with the action (kit/step-up.ts);
 * - a body too large or unreadable: its 4xx page; anything else is a bug, logged, answered 500.
 */
export function consoleErrorHandler(pages: ConsolePages) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (error instanceof TokenRefused) return pages.signInAgain(request, reply)
    if (error instanceof StepUpRequired) return askStepUp(pages, request, reply, error)
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') await drainRequestBody(request.raw)
    const signed = pages.signedOf(request)
    const nonce = pages.nonceOf(request, reply)
    // Fastify drops the content type before it calls an error handler: every answer here is a page.
    reply.header('content-type', 'text/html; charset=utf-8')
    const page = (status: number, title: string, body: SafeHtml): PageResult => [
      status,
      signed ? signed.page({ title }, body) : consolePage({ title, nonce }, body),
    ]
    if (error instanceof Refusal && signed) {
      let result: PageResult
      try {
        result = await refusalResult(signed, error)
      } catch (again) {
        if (again instanceof TokenRefused) return pages.signInAgain(request, reply)
        if (again instanceof StepUpRequired) return askStepUp(pages, request, reply, again)
        // Drawing the form again needed the API too, and it refused (the record went meanwhile).
        if (!(again instanceof Refusal)) throw again
        result = refusalPage(signed, again.refused)
      }
      await pages.settle(request)
      return pages.send(reply, result)
    }
    const fields = error instanceof AppError ? Object.entries(error.attribute ?? {}) : []
    switch (error.validationContext) {
      case 'params': {
        const message = fields.map(([name]) => NOT_FOUND[name]).find(Boolean) ?? 'No such page'
        return pages.send(reply, page(404, 'Not found', notFoundBody(message)))
      }
      case 'body':
        return pages.send(reply, page(400, 'Form not accepted', formRefusedBody(fields, request)))
      case 'querystring':
        return pages.send(reply, page(400, 'Address not accepted', queryRefusedBody(fields, request)))
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      const message = status === 413 ? 'The form is larger than the console accepts.' : error.message
      return pages.send(reply, page(status, 'Not accepted', notAcceptedBody(message)))
    }
    request.log.error({ err: error }, 'console page failed')
    return pages.send(reply, page(500, 'Something went wrong', failedBody(request.id)))
  }
}

/**
 * An address under /console that no route takes (docs/console.md "Inputs and refusals"): the console's own
 * "Page not found", 404, in its frame, never the API's JSON — a page of a person not signed in too, so it
 * reads no session and makes no API call. A page asked with a method it does not answer is a 405 naming
 * them in `Allow`.
 */
export function consoleNotFoundHandler(pages: ConsolePages, methodsOf: (path: string) => string[]) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const nonce = pages.nonce(reply)
    const allowed = methodsOf(request.url.split('?')[0] ?? '')
    if (allowed.length > 0) {
      const body = notAcceptedBody(`This page does not take a ${request.method} request.`)
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(consolePage({ title: 'Not accepted', nonce }, body))
    }
    return reply.code(404).send(consolePage({ title: 'Page not found', nonce }, pageNotFoundBody()))
  }
}

function pageNotFoundBody(): SafeHtml {
  return html`<h1>Page not found</h1>
<p>There is no page at this address. If you typed it, check it; if a link brought you here, the page may
have moved.</p>
<p><a href="/console">Go to the start of the console</a></p>`
}

function notFoundBody(message: string): SafeHtml {
  return html`<h1>Not found</h1>
<div class="notice warning" role="alert"><p>${message}</p></div>
<p><a href="/console/tenants">Back to the tenants</a></p>`
}

function fieldList(fields: [string, string][]): SafeHtml {
  return html`<ul>${fields.map(([name, reason]) => html`<li><code>${name || 'the form'}</code> ${reason}</li>`)}</ul>`
}

/** The form refused before anything was sent: each field and why; back to the page it was posted from. */
function formRefusedBody(fields: [string, string][], request: FastifyRequest): SafeHtml {
  return html`<h1>This form could not be accepted</h1>
<div class="notice warning" role="alert"><p>It holds something no form of this console sends, so nothing
was changed:</p>${fieldList(fields)}</div>
<p><a href="${consolePathOf(request.headers.referer)}">Go back to the form</a></p>`
}

/** The console page a Referer names (its path only, of plain characters), else the tenants. */
function consolePathOf(referer: string | undefined): string {
  const path = URL.canParse(referer ?? '') ? new URL(referer ?? '').pathname : ''
  return /^\/console(\/[\w.-]+)*$/.test(path) && !path.includes('..') ? path : '/console/tenants'
}

/** The query refused: each parameter and why; the same page without its query. */
function queryRefusedBody(fields: [string, string][], request: FastifyRequest): SafeHtml {
  const path = request.url.split('?')[0] ?? '/console'
  return html`<h1>This address could not be used</h1>
<div class="notice warning" role="alert"><p>Its query asks for something this page does not offer:</p>${fieldList(fields)}</div>
<p><a href="${path}">Open the page without it</a></p>`
}

function notAcceptedBody(message: string): SafeHtml {
  return html`<h1>This request could not be accepted</h1>
<div class="notice warning" role="alert"><p>${message} Nothing was changed.</p></div>
<p><a href="/console">Go back to the console</a></p>`
}

function failedBody(requestId: string): SafeHtml {
  return html`<h1>Something went wrong</h1>
<div class="notice warning" role="alert"><p>The page could not be made. Please try again in a moment.</p></div>
<p>If it keeps happening, quote this reference: <code>${requestId}</code>.</p>`
}
