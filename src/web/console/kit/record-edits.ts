import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type {
  FastifyRequest,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
} from 'fastify'
import type { TSchema } from 'typebox'
import type { TypedApp } from '../../../http/typed-app.js'
import { Form, OneOf } from './inputs.js'
import type { ConsolePages, Signed } from './pages.js'
import { type Answer, called, type Redraw } from './refusals.js'

/**
 * What every edit of a record sends (docs/console.md "How it works"): If-Match with the ETag its page
 * was drawn from. A page that had none sends a version no record has, so the API refuses the write as
 * changed meanwhile (412) instead of overwriting what the person never saw.
 */
export function ifMatch(version: string | undefined): { 'if-match': string } {
  return { 'if-match': version || '"none"' }
}

/** The form of a record page's activate / deactivate button. */
const ActiveForm = Form({ active: OneOf(['true', 'false']) })

/** A route's path parameters as its handler receives them, checked by the schema `Params`. */
type PathOf<Params extends TSchema> = FastifyRequest<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  { params: Params },
  TypeBoxTypeProvider
>['params']

/** How one kind of record is switched on and off. */
export interface ActiveToggle<Params extends TSchema, Read extends { etag: string }> {
  /** The tenant and the record the path names, with its ETag (kit/tenant-scope.ts readRecordFor). */
  load: (signed: Signed, params: PathOf<Params>) => Promise<Read>
  /** The record's own PUT of `body`, under If-Match with the record's ETag (ifMatch). */
  put: (signed: Signed, read: Read, body: { active: boolean }) => Promise<Answer<unknown>>
  /** The record's page, where the person lands with the notice. */
  page: (read: Read) => string
  /** The notices (`?done=`) of switching it on and off. */
  notices: readonly [on: string, off: string]
  /** How a refusal is drawn, when not as its own page. */
  redraw?: (signed: Signed, read: Read) => Redraw
}

/**
 * A record's activate / deactivate button (docs/console-admin.md: integrations, webhooks, identity
 * providers): a POST of `active=true|false` to `path`, sent as `{active}` through the record's PUT (the
 * one its edit form sends, under If-Match), then the record's page with the notice saying which way it went.
 */
export function activeToggleRoute<Params extends TSchema, Read extends { etag: string }>(
  router: TypedApp,
  pages: ConsolePages,
  path: string,
  params: Params,
  toggle: ActiveToggle<Params, Read>,
): void {
  router.post(path, { schema: { hide: true, params, body: ActiveForm } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await toggle.load(signed, request.params)
      const active = request.body.active === 'true'
      await called(toggle.put(signed, read, { active }), toggle.redraw?.(signed, read))
      return { redirect: `${toggle.page(read)}?done=${toggle.notices[active ? 0 : 1]}` }
    }),
  )
}
