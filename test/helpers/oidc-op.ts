import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
// @ts-expect-error oidc-provider ships no types (and @types/oidc-provider is not installed)
import ProviderModule from 'oidc-provider'

export type Any = any
export const Provider = ProviderModule as Any

/**
 * What the test providers share (this one and oidc-op-pages.ts): one confidential client for
 * `redirectUri`, and accounts whose id is their e-mail, which openid/email claims carry.
 */
export function providerOptions(client: { clientId: string; clientSecret: string }, redirectUri: string) {
  return {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    findAccount: (_ctx: Any, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, email: id, email_verified: true }),
    }),
    // `amr` goes into the ID token with the openid scope when the login asserted one (TestOp.amr).
    claims: { openid: ['sub', 'amr'], email: ['email', 'email_verified'] },
  }
}

/**
 * A real OpenID provider for tests (oidc-provider) on loopback. Its login interaction signs in whoever
 * `signInAs` names, and grants openid/email at once, so a test can follow the redirects like a browser.
 * `register(redirectUri)` swaps in a client for a redirect URI known only after the provider is saved.
 */
export interface TestOp {
  issuer: string
  clientId: string
  clientSecret: string
  signInAs: string
  /** The `amr` the provider asserts in its ID token (e.g. ['pwd', 'mfa']); none when undefined. */
  amr: string[] | undefined
  register(redirectUri: string): void
  close(): Promise<void>
}

export async function startTestOp(): Promise<TestOp> {
  let handler: Any
  let provider: Any
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/') && provider) {
      void provider.interactionFinished(
        req,
        res,
        { login: { accountId: op.signInAs, ...(op.amr ? { amr: op.amr } : {}) } },
        { mergeWithLastSubmission: false },
      )
      return
    }
    handler?.(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const build = (redirectUri: string) => {
    provider = new Provider(issuer, {
      ...providerOptions(op, redirectUri),
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: Any, interaction: Any) => `/interaction/${interaction.uid}` },
      loadExistingGrant: async (ctx: Any) => {
        const grant = new ctx.oidc.provider.Grant({
          clientId: ctx.oidc.client?.clientId,
          accountId: ctx.oidc.session?.accountId,
        })
        grant.addOIDCScope('openid email profile')
        await grant.save()
        return grant
      },
    })
    handler = provider.callback()
  }
  const op: TestOp = {
    issuer,
    clientId: 'tenantry-test',
    clientSecret: 'a-client-secret-for-the-test-op-0123456789',
    signInAs: '',
    amr: undefined,
    register: build,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
  build('http://tenantry.test/placeholder')
  return op
}
