import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Any, Provider, providerOptions } from './oidc-op.js'

/**
 * A real OpenID provider for browser tests (oidc-provider on loopback) with its own interactive pages:
 * unlike oidc-op.ts, which signs in at once for tests that follow redirects in code, this one shows
 * oidc-provider's login form (any login, any password: the login becomes the account and its e-mail)
 * and then its consent page, for a browser to fill in and submit. `register(redirectUri)` swaps in a
 * client for a redirect URI known only after the identity provider is saved.
 */
export interface InteractiveOp {
  issuer: string
  clientId: string
  clientSecret: string
  register(redirectUri: string): void
  close(): Promise<void>
}

export async function startInteractiveOp(): Promise<InteractiveOp> {
  let handler: Any
  const server: Server = createServer((req, res) => handler?.(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const op: InteractiveOp = {
    issuer,
    clientId: 'tenantry-browser-test',
    clientSecret: 'a-client-secret-for-the-browser-test-op-0123456789',
    register(redirectUri) {
      const provider = new Provider(issuer, {
        ...providerOptions(op, redirectUri),
        // oidc-provider's own login and consent pages (GET/POST /interaction/:uid).
        features: { devInteractions: { enabled: true } },
      })
      handler = provider.callback()
    },
    close() {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  op.register('http://tenantry.test/placeholder')
  return op
}
