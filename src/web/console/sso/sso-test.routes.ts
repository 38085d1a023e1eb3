import { Type } from 'typebox'
import type { paths } from '../../../../generated/openapi.js'
import { html, type SafeHtml } from '../../../html.js'
import { Uuid } from '../../../http/schemas.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { Form } from '../kit/inputs.js'
import type { ConsolePages } from '../kit/pages.js'
import { called } from '../kit/refusals.js'
import { loadProvider, ProviderPath, providerCrumbs, providersOf } from './identity-providers.routes.js'

const TestPath = Type.Object({ tenantId: Uuid(), providerId: Uuid(), testId: Uuid() })

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
export function ssoTestRoutes(router: TypedApp, pages: ConsolePages): void {
  const route = (path: string) => `/console/tenants/:tenantId/identity-providers/:providerId${path}`

  router.post(
    route('/test'),
    { schema: { hide: true, params: ProviderPath, body: Form({}) } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const read = await loadProvider(signed, request.params)
        const { data } = await called(
          signed.api.POST('/v1/tenants/{tenantId}/identity-providers/{id}/test', {
            params: { path: { tenantId: read.tenant.id, id: read.record.id } },
          }),
        )
        return { redirect: `${providersOf(read.tenant)}/${read.record.id}/tests/${data.result.id}` }
      }),
  )

  router.get(route('/tests/:testId'), { schema: { hide: true, params: TestPath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await loadProvider(signed, request.params)
      const { testId } = request.params
      const { data } = await called(
        signed.api.GET('/v1/tenants/{tenantId}/identity-providers/{id}/test/{testId}', {
          params: { path: { tenantId: read.tenant.id, id: read.record.id, testId } },
        }),
      )
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
