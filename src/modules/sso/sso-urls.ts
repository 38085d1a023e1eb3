import type { Config } from '../../config.js'

/** The addresses of a provider's service-provider side, as an operator pastes them into the IdP (docs/sso.md). */
export function serviceProviderUrls(config: Pick<Config, 'publicUrl'>, providerId: string) {
  const base = `${config.publicUrl}/v1/sso/${providerId}`
  return {
    entityId: `${base}/metadata`,
    acsUrl: `${base}/acs`,
    metadataUrl: `${base}/metadata`,
    redirectUri: `${base}/callback`,
    loginUrl: `${base}/login`,
  }
}
