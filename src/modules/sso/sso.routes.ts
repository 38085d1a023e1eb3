import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import { Result, Uuid } from '../../http/schemas.js'
import type { RouteModule, TypedApp } from '../../http/typed-app.js'
import { TOKEN_TTL } from '../auth/auth.schemas.js'
import { createAuthInfoLimits } from './auth-info-limits.js'
import { findIdentityProvider } from './identity-providers.repository.js'
import { AuthInfoSchema, MeTenantSchema, type SsoTest } from './identity-providers.schemas.js'
import { identityProviderNotFound } from './identity-providers.service.js'
import { spMetadataXml } from './saml-sp.js'
import { authInfo, describeMe } from './sign-in-info.service.js'
import { finishOidc, finishSaml, type SsoSignIn, startSignIn, usableProvider } from './sso.service.js'
import {
  beginTestSignIn,
  finishOidcTest,
  finishSamlTest,
  oidcTestOf,
  samlTestOf,
} from './sso-test.service.js'
import { serviceProviderUrls } from './sso-urls.js'

const tags = ['single sign-on']
const ProviderParams = Type.Object({ providerId: Uuid() })

/** The OIDC state rides in a cookie too: the callback must come back to the browser that started it. */
function stateCookie(providerId: string): string {
  return `tenantry_sso_${providerId.replaceAll('-', '')}`
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=')
    if (key === name) return decodeURIComponent(value.join('='))
  }
  return undefined
}

/**
 * The page a test sign-in's browser is shown, made by the web layer from the report (web/sso-test-page.ts,
 * docs/pages.md): this module answers data and renders no HTML. `continueTo`: the page the test was
 * started from, if it named one.
 */
export type SsoTestPage = (
  test: SsoTest,
  continueTo: string | null,
) => { headers: Readonly<Record<string, string>>; body: string }

/** Discovery, the browser round trip with the IdP, SP metadata, and GET /v1/me (docs/sso.md). */
export function ssoRoutes(testPage: SsoTestPage): RouteModule {
  return async (app, ctx) => {
    const secure = ctx.config.publicUrl.startsWith('https:') ? '; Secure' : ''

    /**
     * The hand-over: a session of the person, won through the tenant's provider (amr `sso`), whose token the
     * front end gets in the URL fragment, which never reaches a server or a log. A person disabled since the
     * provider answered gets no session: 401, as any refused sign-in.
     */
    async function handOver(reply: FastifyReply, signIn: SsoSignIn) {
      const started = await app.authenticator.sessions.start(
        {
          userId: signIn.userId,
          authMethods: ['sso'],
          sso: {
            tenantId: signIn.tenantId,
            providerId: signIn.providerId,
            ...(signIn.mfa ? { mfa: true as const } : {}),
          },
          client: { ip: reply.request.ip, userAgent: reply.request.headers['user-agent'] ?? null },
        },
        TOKEN_TTL.default,
      )
      if (!started) throw new AppError('unauthorized', 'Single sign-on refused: this person may not sign in')
      const fragment = new URLSearchParams({
        token: started.token,
        tenantId: signIn.tenantId,
        ttl: String(TOKEN_TTL.default),
      })
      return reply.header('cache-control', 'no-store').redirect(`${signIn.returnTo}#${fragment}`, 303)
    }

    app.get(
      '/me',
      {
        schema: {
          tags: ['auth'],
          operationId: 'getMe',
          summary: "The caller's tenants, whether its password counts in each, and their identity providers",
          description: 'Any authenticated user; the tenants where its membership is accepted.',
          response: { 200: Result(Type.Array(MeTenantSchema)) },
        },
      },
      async (request) => ({ result: await describeMe(ctx, request.actor) }),
    )

    const authInfoLimits = createAuthInfoLimits(ctx)
    app.get(
      '/auth-info/:emailOrTenantId',
      {
        config: { auth: 'public' },
        schema: {
          tags,
          operationId: 'getAuthInfo',
          errors: ['rate_limited'],
          summary: 'Where a login page should send a person: identity providers and whether a password works',
          description:
            'No credentials. The same answer shape for an unknown e-mail or tenant. Look-ups are limited per ' +
            'e-mail address and per client address (TENANTRY_AUTH_INFO_LIMIT_PER_EMAIL, …_PER_ADDRESS, each ' +
            'per 15 minutes; a tenant id counts per client address only): 429 with Retry-After past a limit.',
          security: [],
          params: Type.Object({ emailOrTenantId: Type.String({ minLength: 1, maxLength: 254 }) }),
          response: { 200: Result(AuthInfoSchema) },
        },
      },
      async (request) => {
        await authInfoLimits.take(request.params.emailOrTenantId, request.ip)
        return { result: await authInfo(ctx, request.params.emailOrTenantId) }
      },
    )

    app.get(
      '/sso/:providerId/login',
      {
        config: { auth: 'public' },
        schema: {
          tags,
          operationId: 'startSsoLogin',
          errors: ['identity_provider_not_found'],
          summary: 'Start signing in: a redirect to the identity provider',
          description:
            'No credentials. SAML: an AuthnRequest (HTTP-Redirect). OIDC: authorization code with PKCE, state and ' +
            'nonce. `returnTo`: where the token is handed over — on the origin of TENANTRY_SSO_RETURN_URL, and ' +
            'on this service’s own origin only its pages /sso/complete and /console/sso. `test`: the test ' +
            'sign-in to start (POST …/identity-providers/{id}/test answers this URL; once, within 10 minutes); ' +
            'with it, `returnTo` (this service’s origin or the front end’s) is where the browser goes after the ' +
            'report.',
          security: [],
          params: ProviderParams,
          querystring: Type.Object({
            returnTo: Type.Optional(Type.String({ maxLength: 2048 })),
            test: Type.Optional(
              Uuid({ description: 'A test sign-in’s id: its answer is reported, not used' }),
            ),
          }),
        },
      },
      async (request, reply) => {
        const { providerId } = request.params
        const { url, provider } =
          request.query.test !== undefined
            ? await beginTestSignIn(ctx, providerId, request.query.test, request.query.returnTo)
            : {
                url: await startSignIn(ctx, providerId, request.query.returnTo),
                provider: await usableProvider(ctx, providerId),
              }
        if (provider.protocol === 'oidc') {
          const state = new URL(url).searchParams.get('state') ?? ''
          reply.header(
            'set-cookie',
            `${stateCookie(provider.id)}=${encodeURIComponent(state)}; Path=/v1/sso/${provider.id}; HttpOnly; SameSite=Lax; Max-Age=600${secure}`,
          )
        }
        return reply.header('cache-control', 'no-store').redirect(url, 302)
      },
    )

    await app.register(async (plain) => {
      const forms = plain as unknown as TypedApp
      // The IdP posts its answer as an HTML form; only this route reads that content type.
      forms.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: 1024 * 1024 },
        (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
      )
      forms.post(
        '/sso/:providerId/acs',
        {
          config: { auth: 'public' },
          schema: {
            tags,
            operationId: 'consumeSamlAssertion',
            errors: ['identity_provider_not_found', 'unauthorized', 'permission_denied'],
            summary: 'SAML assertion consumer service (the IdP posts here)',
            description:
              'No credentials: the signed SAML Response is the credential. Answers a redirect to the front end.',
            security: [],
            params: ProviderParams,
            body: Type.Object(
              { SAMLResponse: Type.String({ minLength: 1 }), RelayState: Type.Optional(Type.String()) },
              { examples: [{ SAMLResponse: 'PHNhbWxwOlJlc3BvbnNlIC4uLg==' }] },
            ),
          },
        },
        async (request, reply) => {
          const { providerId } = request.params
          const answered = await samlTestOf(ctx, providerId, request.body.SAMLResponse)
          if (answered !== undefined) {
            const test = await finishSamlTest(ctx, providerId, answered.testId, request.body.SAMLResponse)
            const page = testPage(test, answered.returnTo)
            return reply.headers(page.headers).send(page.body)
          }
          return handOver(reply, await finishSaml(ctx, providerId, request.body.SAMLResponse))
        },
      )
    })

    app.get(
      '/sso/:providerId/callback',
      {
        config: { auth: 'public' },
        schema: {
          tags,
          operationId: 'completeOidcLogin',
          errors: ['identity_provider_not_found', 'unauthorized', 'permission_denied'],
          summary: 'OpenID Connect redirect URI (the IdP sends the browser here)',
          description: 'No credentials: the authorization code, state and ID token are checked.',
          security: [],
          params: ProviderParams,
          // The IdP's answer (RFC 6749 §4.1.2, OpenID Connect Core §3.1.2.5); any other parameter passes
          // through to openid-client, which checks the whole redirect.
          querystring: Type.Object(
            {
              code: Type.Optional(Type.String({ maxLength: 4096 })),
              state: Type.Optional(Type.String({ maxLength: 1024 })),
              iss: Type.Optional(Type.String({ maxLength: 2048 })),
              error: Type.Optional(Type.String({ maxLength: 256 })),
              error_description: Type.Optional(Type.String({ maxLength: 2048 })),
            },
            { additionalProperties: Type.String({ maxLength: 4096 }) },
          ),
        },
      },
      async (request, reply) => {
        const name = stateCookie(request.params.providerId)
        const query = request.query as Record<string, string>
        reply.header('set-cookie', `${name}=; Path=/v1/sso/${request.params.providerId}; HttpOnly; Max-Age=0`)
        const browserState = readCookie(request.headers.cookie, name)
        const answered = await oidcTestOf(ctx, request.params.providerId, query.state)
        if (answered !== undefined) {
          const { testId, returnTo } = answered
          const test = await finishOidcTest(ctx, request.params.providerId, testId, query, browserState)
          const page = testPage(test, returnTo)
          return reply.headers(page.headers).send(page.body)
        }
        return handOver(reply, await finishOidc(ctx, request.params.providerId, query, browserState))
      },
    )

    app.get(
      '/sso/:providerId/metadata',
      {
        config: { auth: 'public' },
        schema: {
          tags,
          operationId: 'getSamlServiceProviderMetadata',
          errors: ['identity_provider_not_found'],
          summary: "This service's SAML service-provider metadata for one identity provider",
          description:
            'No credentials. Give it (or its URL) to the IdP. Served for an inactive provider too: the IdP is set ' +
            'up, and tested, before the provider is turned on.',
          security: [],
          params: ProviderParams,
        },
      },
      async (request, reply) => {
        const provider = await findIdentityProvider(ctx.db, request.params.providerId)
        if (!provider) throw identityProviderNotFound()
        const urls = serviceProviderUrls(ctx.config, provider.id)
        return reply.type('application/samlmetadata+xml').send(spMetadataXml(urls))
      },
    )
  }
}
