import type { FastifyInstance } from 'fastify'
import type { paths } from '../../../../generated/openapi.js'
import { html, type SafeHtml } from '../../../html.js'
import { apiErrorOf } from '../api/client.js'
import { type ConsolePages, refusalPage } from '../kit/pages.js'
import { UUID } from '../kit/tenant-scope.js'
import {
  loadProvider,
  type ProviderParams,
  providerCrumbs,
  providersOf,
} from './identity-providers.routes.js'

type SsoTest =
  paths['/v1/tenants/{tenantId}/identity-providers/{id}/test/{testId}']['get']['responses'][200]['content']['application/json']['result']

function shown(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join(', ')
  if (value !== null && typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/**
 * What the provider asserted, in words; before it answered, the link that starts the sign-in there —
 * with `returnTo` this page, so the provider's answer ends here in the console (docs/console-admin.md).
 */
function testBody(providerName: string, test: SsoTest, again: string, publicUrl: string): SafeHtml {
  const start = `${test.url}&returnTo=${encodeURIComponent(`${publicUrl}${again}`)}`
  if (test.status === 'pending' || test.status === 'started')
    return html`<h1>Test sign-in at ${providerName}</h1>
<p>Sign in at the identity provider as a person of this tenant would. When it answers, you come back
here to what it asserted; nobody is signed in, and no account or membership is created.</p>
<div class="actions"><a class="button" href="${start}">Sign in at ${providerName}</a>
<a href="${again}">See the result</a></div>
<p class="muted">${test.status === 'started' ? 'The sign-in was started; the provider has not answered yet.' : 'The link works once, within 10 minutes.'}</p>`
  const attributes = Object.entries(test.attributes ?? {})
  return html`<h1>Test sign-in result</h1>
${
  test.status === 'succeeded'
    ? html`<div class="notice success" role="status"><p>${providerName}’s answer passed every check. ${
        test.memberFound
          ? 'This person has an accepted membership: a real sign-in would work.'
          : 'This person has no accepted membership in the tenant: a real sign-in would be refused.'
      }</p></div>`
    : html`<div class="notice warning" role="alert"><p>The answer was refused: ${test.error ?? 'no reason given'}.</p></div>`
}
<p>This was a test: nobody was signed in.</p>
<dl class="summary">
<dt>E-mail</dt><dd>${test.email ?? 'none asserted'}</dd>
${test.nameId ? html`<dt>NameID</dt><dd>${test.nameId}</dd>` : ''}
<dt>Tested</dt><dd>${test.completed ?? '—'}</dd>
</dl>
${
  attributes.length
    ? html`<h2>Attributes the provider sent</h2>
<dl class="summary">${attributes.map(([name, value]) => html`<dt>${name}</dt><dd>${shown(value)}</dd>`)}</dl>`
    : ''
}`
}

/**
 * Test sign-ins from the console (docs/console-admin.md): "Test sign-in" starts one (`POST …/test`); its
 * page links to the provider, which answers back to this page, reporting what it asserted
 * (`GET …/test/{testId}`).
 */
export function ssoTestRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const route = (path: string) => `/console/tenants/:tenantId/identity-providers/:providerId${path}`

  router.post(route('/test'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params as ProviderParams)
      if ('refused' in read) return read.refused
      const { data, error, response } = await signed.api.POST(
        '/v1/tenants/{tenantId}/identity-providers/{id}/test',
        { params: { path: { tenantId: read.tenant.id, id: read.record.id } } },
      )
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      return { redirect: `${providersOf(read.tenant)}/${read.record.id}/tests/${data.result.id}` }
    }),
  )

  router.get(route('/tests/:testId'), { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const params = request.params as ProviderParams
      const read = await loadProvider(signed, params)
      if ('refused' in read) return read.refused
      const testId = params.testId ?? ''
      if (!UUID.test(testId))
        return refusalPage(signed, {
          code: 404,
          reason: 'sso_test_not_found',
          message: 'No such test sign-in',
        })
      const { data, error, response } = await signed.api.GET(
        '/v1/tenants/{tenantId}/identity-providers/{id}/test/{testId}',
        { params: { path: { tenantId: read.tenant.id, id: read.record.id, testId } } },
      )
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
      const here = `${providersOf(read.tenant)}/${read.record.id}/tests/${testId}`
      return [
        200,
        signed.page(
          {
            title: 'Test sign-in',
            area: 'tenants',
            crumbs: providerCrumbs(
              read.tenant,
              [read.record.name, `${providersOf(read.tenant)}/${read.record.id}`],
              ['Test sign-in', undefined],
            ),
          },
          testBody(read.record.name, data.result, here, pages.ctx.config.publicUrl),
        ),
      ]
    }),
  )
}
