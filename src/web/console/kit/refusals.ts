import { html } from '../../../html.js'
import { type ApiError, apiErrorOf } from '../api/client.js'
import type { Errors } from './forms.js'
import type { PageResult, Signed } from './pages.js'

/**
 * How a page meets a refusal (docs/console.md "Inputs and refusals"): it throws one, and the console's one error
 * handler (kit/error-pages.ts) draws it — a stale edit as "changed meanwhile", a refused form again with
 * the API's field errors beside its fields, anything else as the refusal's own page (not found,
 * forbidden, …) with its status. A page says only what its form and its record are.
 */
export interface Redraw {
  /** The form drawn again with the refusal's field errors; for 400 and 409 unless `formCodes` says. */
  form?: (errors: Errors, status: number) => PageResult | Promise<PageResult>
  formCodes?: readonly number[]
  /** The refusal's field errors on the form's fields: by default the API's `attribute` as it is. */
  errorsOf?: (refused: ApiError) => Errors
  /** A stale edit (412): "This {what} was changed meanwhile", and the page to open it again. */
  changed?: { what: string; href: string }
}

/** An API refusal thrown by a page, with what the page would draw it as. */
export class Refusal extends Error {
  constructor(
    readonly refused: ApiError,
    readonly redraw: Redraw = {},
  ) {
    super(refused.message)
    this.name = 'Refusal'
  }
}

/** A refusal of the console's own: a record the path names but the API was not asked about. */
export function notFound(reason: string, message: string): Refusal {
  return new Refusal({ code: 404, reason, message })
}

/** What a typed client call answers (openapi-fetch): the body on success, else the error body. */
export interface Answer<Data> {
  data?: Data
  error?: unknown
  response: Response
}

/**
 * The answer of an API call that succeeded; a refusal is thrown (drawn as `redraw` says). A call
 * answering 204 has no body: its `data` is then undefined.
 */
export async function called<Data>(
  call: Promise<Answer<Data>>,
  redraw?: Redraw,
): Promise<{ data: Data; response: Response }> {
  const { data, error, response } = await call
  if (!response.ok) throw new Refusal(apiErrorOf(error, response.status), redraw)
  return { data: data as Data, response }
}

/** The page a refusal becomes (see Redraw). */
export async function refusalResult(signed: Signed, refusal: Refusal): Promise<PageResult> {
  const { refused, redraw } = refusal
  if (refused.code === 412 && redraw.changed)
    return changedMeanwhilePage(signed, redraw.changed.what, redraw.changed.href)
  if (redraw.form && (redraw.formCodes ?? [400, 409]).includes(refused.code))
    return redraw.form((redraw.errorsOf ?? formErrorsOf)(refused), refused.code)
  return refusalPage(signed, refused)
}

/** The page of a refusal (403, 404, …): its message, visibly, with its status. */
export function refusalPage(signed: Signed, error: ApiError): PageResult {
  // A tenant whose policy requires a second factor, past this person's deadline: where to add one.
  if (error.code === 403 && error.reason === 'mfa_required')
    return [
      403,
      signed.page(
        { title: 'Second factor needed' },
        html`<h1>Add a second factor first</h1>
<div class="notice warning" role="alert"><p>${error.message}</p></div>
<p>This tenant requires an authenticator app or a passkey of everyone who works in it. Add one on your
<a href="/console/security">Security</a> page, then sign out and in again with it.</p>`,
      ),
    ]
  const heading = error.code === 404 ? 'Not found' : error.code === 403 ? 'Not allowed' : 'That did not work'
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
export function formErrorsOf(error: ApiError, rename: Record<string, string> = {}): Errors {
  const errors: Errors = {}
  for (const [field, reason] of Object.entries(error.attribute ?? {})) errors[rename[field] ?? field] = reason
  if (Object.keys(errors).length === 0) errors._ = error.message
  return errors
}
