import type { Configuration } from 'openid-client'
import { TtlCache } from '../../access/cache.js'
import type { ServiceContext } from '../../context.js'
import type { IdentityProviderRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { createOutboundFetch, outboundPolicy } from '../../http/outbound.js'
import { openClientSecret } from './identity-providers.service.js'
import { discoverOidc } from './oidc-client.js'
import { type CacheProvider, SAML_REQUEST_TTL_MS } from './saml-sp.js'
import { findSsoRequest, insertSsoRequest, takeSsoRequest } from './sso.repository.js'

/**
 * What a sign-in keeps between its start and the provider's answer: the OIDC client of a provider
 * (discovery, cached briefly), and the SAML requests this service issued (node-saml's InResponseTo cache,
 * in the database so that the answer may reach any process).
 */

const oidcConfigs = new TtlCache<string, Configuration>(5 * 60_000, 1_000)

export async function oidcConfig(ctx: ServiceContext, provider: IdentityProviderRow): Promise<Configuration> {
  const key = `${provider.id}:${provider.updated.getTime()}`
  const policy = outboundPolicy(ctx.config)
  return oidcConfigs.getOrLoad(key, async () => {
    try {
      return await discoverOidc(
        {
          issuer: provider.issuer ?? '',
          clientId: provider.client_id ?? '',
          clientSecret: openClientSecret(ctx, provider),
        },
        createOutboundFetch(policy),
        policy,
      )
    } catch (error) {
      ctx.logger.warn({ err: error, providerId: provider.id }, 'OIDC discovery failed')
      throw new AppError('service_unavailable', 'The identity provider cannot be reached')
    }
  })
}

/** A database-backed InResponseTo cache for one validation: node-saml asks it for the ids we issued. */
export function samlRequests(
  ctx: ServiceContext,
  providerId: string,
  returnTo: string | null,
  testId?: string,
) {
  const state = { returnTo: null as string | null, testId: null as string | null }
  const cache: CacheProvider = {
    async saveAsync(key, value) {
      const now = ctx.clock.now()
      await insertSsoRequest(ctx.db, {
        id: key,
        providerId,
        kind: 'saml',
        returnTo,
        created: now,
        expires: new Date(now.getTime() + SAML_REQUEST_TTL_MS),
        ...(testId ? { testId } : {}),
      })
      return { value, createdAt: now.getTime() }
    },
    async getAsync(key) {
      const row = await findSsoRequest(ctx.db, providerId, key, ctx.clock.now())
      return row && row.kind === 'saml' ? row.created.toISOString() : null
    },
    async removeAsync(key) {
      if (key === null) return null
      const row = await takeSsoRequest(ctx.db, providerId, key, ctx.clock.now())
      if (!row) return null
      state.returnTo = row.return_to
      state.testId = row.test_id
      return key
    },
  }
  return { cache, state }
}
