import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { ServiceContext } from '../../context.js'
import { collectRouteMethods } from '../../http/protocol-edges.js'
import { auditRoutes } from './audit/audit.routes.js'
import { integrationRoutes } from './integrations/integrations.routes.js'
import { keyRoutes } from './keys/keys.routes.js'
import { ENHANCE_SCRIPT, FAVICON, PASSKEY_SCRIPT, STYLESHEET, webauthnBrowserBundle } from './kit/assets.js'
import { consoleErrorHandler, consoleNotFoundHandler } from './kit/error-pages.js'
import { multipartFormParser } from './kit/multipart.js'
import { ConsolePages } from './kit/pages.js'
import { stepUpRoutes } from './kit/step-up.js'
import { memberRoutes } from './members/members.routes.js'
import { roleRoutes } from './roles/roles.routes.js'
import { scimRoutes } from './scim/scim.routes.js'
import { securityRoutes } from './security/security.routes.js'
import { SessionStore } from './session/session-store.js'
import { signInRoutes } from './session/sign-in.routes.js'
import { identityProviderRoutes } from './sso/identity-providers.routes.js'
import { passwordPolicyRoutes } from './sso/password-policy.routes.js'
import { ssoTestRoutes } from './sso/sso-test.routes.js'
import { tenantRoutes } from './tenants/tenants.routes.js'
import { userRoutes } from './users/users.routes.js'
import { webhookRoutes } from './webhooks/webhooks.routes.js'

const FORM_LIMIT = 256 * 1024
/** The CSV import's upload (users/import-csv.ts bounds the CSV itself, with a message, well below). */
const UPLOAD_LIMIT = 1024 * 1024

/**
 * The console at /console (docs/console.md): server-rendered pages over the `/v1` API, one folder per area.
 * Registered by buildApp unless TENANTRY_CONSOLE=off. `root` is the whole application: the console's API
 * client injects its calls there.
 */
export async function consoleRoutes(router: FastifyInstance, root: FastifyInstance, ctx: ServiceContext) {
  // Plain HTML forms post urlencoded fields; this parser exists only inside the console's plugin.
  router.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (_request, body, done) => {
      const fields: Record<string, string | string[]> = {}
      for (const [name, value] of new URLSearchParams(body as string)) {
        const seen = fields[name]
        fields[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
      }
      done(null, fields)
    },
  )
  router.addContentTypeParser('multipart/form-data', multipartFormParser(UPLOAD_LIMIT))
  // The headers every console response carries; a page replaces the CSP with its own (a script nonce).
  router.addHook('onRequest', async (_request, reply) => {
    reply.headers({
      'cache-control': 'no-store',
      'referrer-policy': 'same-origin',
      'x-content-type-options': 'nosniff',
      'content-security-policy':
        "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    })
  })
  const pages = new ConsolePages(root, ctx, new SessionStore(ctx.db, ctx.keys))
  // Every failure of a console request is a console page (kit/error-pages.ts), never the API's JSON;
  // an address no console route takes too, in a scope of its own (Fastify finds a not-found handler by
  // prefix), which knows the console's routes to tell a wrong method from a missing page.
  router.setErrorHandler(consoleErrorHandler(pages))
  const methodsOf = collectRouteMethods(router)
  await router.register(async (scope) => scope.setNotFoundHandler(consoleNotFoundHandler(pages, methodsOf)), {
    prefix: '/console',
  })

  const asset = (path: string, type: string, body: string) =>
    router.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .headers({
          'content-type': type,
          'cache-control': 'public, max-age=3600',
          'x-content-type-options': 'nosniff',
        })
        .send(body),
    )
  asset('/console/assets/console.css', 'text/css; charset=utf-8', STYLESHEET)
  asset('/console/assets/console.js', 'text/javascript; charset=utf-8', ENHANCE_SCRIPT)
  asset('/console/assets/favicon.svg', 'image/svg+xml', FAVICON)
  asset('/console/assets/webauthn.js', 'text/javascript; charset=utf-8', webauthnBrowserBundle())
  asset('/console/assets/passkey.js', 'text/javascript; charset=utf-8', PASSKEY_SCRIPT)
  router.get('/console', { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect('/console/tenants', 303),
  )

  // Signing in and out: pages for a person without a session, with checks of their own.
  signInRoutes(router.withTypeProvider<TypeBoxTypeProvider>(), pages)
  // Every other page is a signed-in person's: one hook admits them (session, CSRF) before the route's
  // schema checks its inputs, so a refused input is drawn in their frame and no handler sees it.
  await router.register(async (area) => {
    const signedIn = area.withTypeProvider<TypeBoxTypeProvider>()
    signedIn.addHook('preValidation', (request, reply) => pages.admit(request, reply))
    tenantRoutes(signedIn, pages)
    memberRoutes(signedIn, pages)
    userRoutes(signedIn, pages)
    keyRoutes(signedIn, pages)
    roleRoutes(signedIn, pages)
    scimRoutes(signedIn, pages)
    webhookRoutes(signedIn, pages)
    auditRoutes(signedIn, pages)
    integrationRoutes(signedIn, pages)
    identityProviderRoutes(signedIn, pages)
    ssoTestRoutes(signedIn, pages)
    passwordPolicyRoutes(signedIn, pages)
    securityRoutes(signedIn, pages)
    stepUpRoutes(signedIn, pages)
  })
}
