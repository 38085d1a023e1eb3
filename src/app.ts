import { randomUUID } from 'node:crypto'
import compress from '@fastify/compress'
import cors from '@fastify/cors'
import type { FastifyOtelInstrumentation } from '@fastify/otel'
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { AccessControl } from './access/effective.js'
import type { Clock } from './clock.js'
import type { Config } from './config.js'
import type { AppState, Platform, ServiceContext } from './context.js'
import type { Keys } from './crypto/keys.js'
import { TokenSigner } from './crypto/tokens.js'
import type { Database } from './db/schema.js'
import { StatementBatchers } from './db/statement-batcher.js'
import { ERROR_REASONS } from './errors.js'
import { DatabaseCounterStore } from './http/counter-store.js'
import { registerDocsRoutes } from './http/docs-routes.js'
import { registerErrorHandling } from './http/error-handler.js'
import { registerEtags } from './http/etag.js'
import { registerIdempotency } from './http/idempotency.js'
import { registerJsonParser } from './http/json-body.js'
import { type PoolStats, registerMetricsAndRequestLog } from './http/metrics.js'
import {
  AUTHENTICATED,
  documentRoute,
  SECURITY_SCHEMES,
  withOpenRequestBodies,
  withoutValidatorKeywords,
} from './http/openapi.js'
import { clientErrorHandler } from './http/protocol-edges.js'
import { MemoryCounterStore } from './http/rate-limit.js'
import { registerRequestContext } from './http/request-context.js'
import { ErrorBodySchema } from './http/schemas.js'
import type { RouteModule, TypedApp } from './http/typed-app.js'
import { validatorCompiler } from './http/validation.js'
import { apiKeyRoutes } from './modules/api-keys/api-keys.routes.js'
import { auditRoutes } from './modules/audit/audit.routes.js'
import { authRoutes } from './modules/auth/auth.routes.js'
import { registerAuthentication } from './modules/auth/auth-hook.js'
import { Authenticator } from './modules/auth/authenticator.js'
import { bulkUserRoutes } from './modules/bulk/bulk.routes.js'
import { documentBulkForms } from './modules/bulk/bulk-openapi.js'
import { healthRoutes } from './modules/health/health.routes.js'
import { integrationRoutes } from './modules/integrations/integrations.routes.js'
import { acceptanceRoutes } from './modules/memberships/acceptance.routes.js'
import { createInvitationLimiters } from './modules/memberships/invitation-limits.js'
import { membershipRoutes } from './modules/memberships/memberships.routes.js'
import { resolveNarrowToken } from './modules/memberships/narrow-token.js'
import { createSecondFactorState } from './modules/mfa/answer-limits.js'
import { factorResetRoutes } from './modules/mfa/factor-reset.routes.js'
import { factorRoutes } from './modules/mfa/factors.routes.js'
import { mfaTokenRoutes } from './modules/mfa/mfa-tokens.routes.js'
import { passkeyRoutes } from './modules/mfa/passkey.routes.js'
import { secondFactorGate } from './modules/mfa/sign-in.service.js'
import { requireRecentSecondFactor } from './modules/mfa/step-up.js'
import { webauthnRoutes } from './modules/mfa/webauthn.routes.js'
import { PasskeyAnswers } from './modules/mfa/webauthn-answers.js'
import { mfaPolicyRoutes } from './modules/mfa-policy/mfa-policy.routes.js'
import { regionRoutes } from './modules/regions/regions.routes.js'
import { roleRoutes } from './modules/roles/roles.routes.js'
import { createRoleCatalogCache } from './modules/roles/roles.service.js'
import { scimRoutes } from './modules/scim/scim.routes.js'
import { createScimDefaultRoleCache } from './modules/scim/scim-context.js'
import { scimSettingsRoutes } from './modules/scim/scim-settings.routes.js'
import { sessionRoutes } from './modules/sessions/sessions.routes.js'
import { identityProviderRoutes } from './modules/sso/identity-providers.routes.js'
import { ssoRoutes } from './modules/sso/sso.routes.js'
import { tenantRoutes } from './modules/tenants/tenants.routes.js'
import { passwordResetRoutes } from './modules/users/password-reset.routes.js'
import { createPasswordResetLimiters } from './modules/users/password-reset.service.js'
import { userRoutes } from './modules/users/users.routes.js'
import { webhookRoutes } from './modules/webhooks/webhooks.routes.js'
import { OutboxSignal } from './outbox/outbox-signal.js'
import { acceptancePageRoutes } from './web/accept-routes.js'
import { consoleRoutes } from './web/console/console-plugin.js'
import { passwordResetPageRoutes } from './web/reset-routes.js'
import { ssoPageRoutes } from './web/sso-complete.js'
import { ssoTestPage } from './web/sso-test-page.js'

export interface AppDeps {
  db: Kysely<Database>
  config: Config
  clock: Clock
  keys: Keys
  logger: Logger
  platform: Platform
  /** The server pool's figures for /metrics (server databases only). */
  poolStats?: () => PoolStats
  /** Tracing's Fastify instrumentation, when OTEL_EXPORTER_OTLP_ENDPOINT is set (tracing.ts). */
  tracing?: FastifyOtelInstrumentation
}

export interface App {
  app: FastifyInstance
  ctx: ServiceContext
}

/** The features, each a folder under modules/, registered under /v1. */
const ROUTE_MODULES: RouteModule[] = [
  authRoutes,
  regionRoutes,
  tenantRoutes(requireRecentSecondFactor),
  integrationRoutes,
  bulkUserRoutes,
  userRoutes(resolveNarrowToken, requireRecentSecondFactor),
  passwordResetRoutes,
  roleRoutes,
  apiKeyRoutes,
  membershipRoutes,
  acceptanceRoutes,
  webhookRoutes,
  auditRoutes,
  identityProviderRoutes,
  ssoRoutes(ssoTestPage),
  scimSettingsRoutes,
  sessionRoutes,
  factorRoutes,
  mfaTokenRoutes,
  webauthnRoutes,
  passkeyRoutes,
  factorResetRoutes,
  mfaPolicyRoutes(requireRecentSecondFactor),
]

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The one factory of the HTTP application, used by the server, the tests and the benchmarks. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    // Echo a well-formed incoming request id; otherwise make one.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id']
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
    },
    return503OnClosing: true,
    // One line per request, written by the metrics hook when the response is done (health probes at debug).
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: 'idle',
    // What Node's HTTP parser refuses (431, 400, 408) is answered in the error envelope too.
    clientErrorHandler,
    // A path parameter longer than maxParamLength makes the router answer 414 before any route runs; a pasted
    // invitation link with junk after the token must get the invitation's own 404 instead.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
  }).withTypeProvider<TypeBoxTypeProvider>()

  const access = new AccessControl(deps.db, undefined, deps.clock)
  // Counters shared by every process on a server database; the embedded one serves a single process.
  const serverDatabase = /^postgres(ql)?:\/\//.test(deps.config.databaseUrl ?? '')
  const counters = serverDatabase ? new DatabaseCounterStore(deps.db) : new MemoryCounterStore()
  const state: AppState = {
    roleCatalog: createRoleCatalogCache(access),
    scimDefaultRoles: createScimDefaultRoleCache(access),
    invitationLimiters: createInvitationLimiters(deps.clock, counters),
    passwordResetLimiters: createPasswordResetLimiters(deps.clock, counters),
    outboxSignal: new OutboxSignal(),
    statementBatchers: new StatementBatchers(),
    // Its `webauthn` is set below once the WebAuthn answers exist (modules/mfa/webauthn-answers.ts).
    secondFactors: createSecondFactorState(deps.clock, counters),
  }
  const ctx: ServiceContext = { ...deps, access, counters, ...state }
  ctx.secondFactors.webauthn = new PasskeyAnswers(ctx)
  const authenticator = new Authenticator(
    deps.db,
    deps.clock,
    new TokenSigner(deps.keys.tokenSecret),
    access,
    counters,
    deps.logger,
  )

  // A password then asks for the account's second factor (docs/security.md); mfa builds on auth.
  authenticator.secondFactors = secondFactorGate(ctx, authenticator.sessions)

  app.setValidatorCompiler(validatorCompiler)
  const root = app as unknown as FastifyInstance
  // Before any route, so that every route gets its spans.
  if (deps.tracing) await app.register(deps.tracing.plugin())
  registerMetricsAndRequestLog(root, {
    db: deps.db,
    ...(deps.poolStats ? { poolStats: deps.poolStats } : {}),
    now: () => deps.clock.now().getTime(),
  })
  if (deps.config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: deps.config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      exposedHeaders: ['x-request-id', 'etag', 'location', 'retry-after', 'www-authenticate'],
      maxAge: 600,
    })
  }
  await app.register(compress, { global: true, threshold: 1024, encodings: ['gzip', 'deflate'] })
  registerJsonParser(root)
  registerRequestContext(root)
  registerErrorHandling(root)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
  app.addSchema(ErrorBodySchema)
  // Every route documents the error envelope for its failures.
  app.addHook('onRoute', (route) => {
    if (route.schema?.hide) return
    route.schema = {
      ...route.schema,
      response: {
        ...(route.schema?.response as object),
        '4xx': { $ref: 'ErrorBody#' },
        '5xx': { $ref: 'ErrorBody#' },
      },
    }
  })
  app.decorate('authenticator', authenticator)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tenantry',
        version: '1',
        description:
          'Provisioning of tenants, platform users, tenant invitations and integrations. Every failure ' +
          'answers `{"error": {code, reason, message, attribute?, requestId}}`; each operation lists the ' +
          `reasons it can answer. All reasons: ${Object.keys(ERROR_REASONS).join(', ')}.`,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: deps.config.publicUrl, description: 'This deployment (TENANTRY_PUBLIC_URL)' }],
      components: { securitySchemes: SECURITY_SCHEMES },
      security: AUTHENTICATED,
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: documentRoute,
    transformObject: (document) =>
      'openapiObject' in document
        ? withoutValidatorKeywords(withOpenRequestBodies(documentBulkForms(document.openapiObject)))
        : document.swaggerObject,
  })
  await registerDocsRoutes(root)

  await app.register(async (health) => healthRoutes(health as TypedApp, ctx))
  await app.register(async (web) => passwordResetPageRoutes(web as TypedApp, ctx))
  await app.register(async (web) => acceptancePageRoutes(web as TypedApp, ctx))
  await app.register(async (web) => ssoPageRoutes(web as TypedApp, ctx))
  if (deps.config.console) {
    await app.register(async (web) => consoleRoutes(web as unknown as FastifyInstance, root, ctx))
  }
  await app.register(
    async (v1) => {
      // Everything under /v1 needs credentials unless its route says otherwise; health and docs do not.
      // The document's `security` follows the mode the hook enforces; `required` is the default.
      v1.addHook('onRoute', (route) => {
        route.config = { ...route.config, auth: route.config?.auth ?? 'required' }
      })
      registerAuthentication(v1 as unknown as FastifyInstance, authenticator, {
        perCredentialPerMinute: deps.config.apiRateLimitPerMinute,
        counters,
        now: () => deps.clock.now().getTime(),
      })
      registerIdempotency(v1 as unknown as FastifyInstance, deps.db, deps.clock, deps.keys)
      registerEtags(v1 as unknown as FastifyInstance)
      for (const routes of ROUTE_MODULES) await routes(v1 as TypedApp, ctx)
    },
    { prefix: '/v1' },
  )
  // SCIM 2.0 (docs/scim.md): its own media type, error shape and bearer credential, outside /v1.
  await app.register(scimRoutes(ctx, authenticator), { prefix: '/scim/v2' })
  return { app: app as unknown as FastifyInstance, ctx }
}

declare module 'fastify' {
  interface FastifyInstance {
    authenticator: Authenticator
  }
}
