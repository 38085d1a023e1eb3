import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { inflateRawSync } from 'node:zlib'
import type { TestIdp } from './saml-idp.js'

/**
 * The samlify IdP's pages on loopback, for a browser (test/web/sso.test.ts, test/web/console/session.test.ts
 * and sso.test.ts): GET /sso (HTTP-Redirect binding) reads the
 * AuthnRequest and asks who signs in; POST /sso answers with the signed SAMLResponse in a form for the
 * ACS (HTTP-POST binding), sent when the person clicks Continue; GET /metadata publishes the IdP's
 * metadata (for a provider added by metadata URL). `answer` is read on each request, so a test can set
 * the IdP and the service provider's metadata once they exist.
 */
export interface SamlIdpPages {
  ssoUrl: string
  metadataUrl: string
  close(): Promise<void>
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** A page with an empty icon: the browser asks this server for no favicon, so console errors are the service's. */
function htmlPage(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`
}

export async function startSamlIdpPages(answer: {
  idp?: TestIdp
  spMetadata?: string
}): Promise<SamlIdpPages> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://idp.invalid')
      if (req.method === 'GET' && url.pathname === '/metadata' && answer.idp) {
        res.setHeader('content-type', 'application/samlmetadata+xml')
        res.end(answer.idp.metadata)
        return
      }
      res.setHeader('content-type', 'text/html; charset=utf-8')
      if (req.method === 'GET' && url.pathname === '/sso') {
        const request = inflateRawSync(
          Buffer.from(url.searchParams.get('SAMLRequest') ?? '', 'base64'),
        ).toString()
        const requestId = /ID="([^"]+)"/.exec(request)?.[1] ?? ''
        const relayState = url.searchParams.get('RelayState') ?? ''
        res.end(
          htmlPage(
            'Test IdP: sign in',
            `<h1>Test IdP</h1><form method="post" action="/sso">
<input type="hidden" name="requestId" value="${escapeHtml(requestId)}">
<input type="hidden" name="relayState" value="${escapeHtml(relayState)}">
<label for="email">E-mail</label> <input id="email" name="email" type="email" required>
<button type="submit">Sign in</button></form>`,
          ),
        )
        return
      }
      if (req.method === 'POST' && url.pathname === '/sso' && answer.idp && answer.spMetadata) {
        let body = ''
        for await (const chunk of req) body += chunk
        const form = new URLSearchParams(body)
        const acs = /AssertionConsumerService[^>]*Location="([^"]+)"/.exec(answer.spMetadata)?.[1] ?? ''
        const samlResponse = await answer.idp.respond(answer.spMetadata, form.get('email') ?? '', {
          InResponseTo: form.get('requestId') ?? '',
        })
        const relayState = form.get('relayState')
        res.end(
          htmlPage(
            'Test IdP: continue',
            `<h1>Signed in at the test IdP</h1><form method="post" action="${escapeHtml(acs)}">
<input type="hidden" name="SAMLResponse" value="${escapeHtml(samlResponse)}">
${relayState ? `<input type="hidden" name="RelayState" value="${escapeHtml(relayState)}">` : ''}
<button type="submit">Continue</button></form>`,
          ),
        )
        return
      }
      res.statusCode = 404
      res.end(htmlPage('Not found', '<h1>Not found</h1>'))
    })().catch((error: unknown) => {
      res.statusCode = 500
      res.end(htmlPage('Error', `<h1>IdP error</h1><pre>${escapeHtml(String(error))}</pre>`))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    ssoUrl: `${origin}/sso`,
    metadataUrl: `${origin}/metadata`,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
