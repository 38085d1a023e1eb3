import type { FastifyInstance } from 'fastify'
import type { paths } from '../../../../generated/openapi.js'
import { html } from '../../../html.js'
import { apiErrorOf } from '../api/client.js'
import type { FormToken } from '../kit/form-token.js'
import { formTokenFields, selectField, text } from '../kit/forms.js'
import { type ConsolePages, changedMeanwhilePage, type PageResult, refusalPage } from '../kit/pages.js'
import { readTenantFor, tenantListPage, UUID } from '../kit/tenant-scope.js'
import { PASSWORD_POLICY } from '../tenants/tenants.views.js'

type Policy = keyof typeof PASSWORD_POLICY
type Impact =
  paths['/v1/tenants/{tenantId}/password-policy-impact']['get']['responses'][200]['content']['application/json']['result']
type Tenant = { id: string; name: string; cxengageIdentityProvider: string }

const policyOf = (value: unknown): Policy | undefined =>
  typeof value === 'string' && Object.hasOwn(PASSWORD_POLICY, value) ? (value as Policy) : undefined

const people = (n: number) => `${n} ${n === 1 ? 'member' : 'members'}`

function policyBody(o: {
  tenant: Tenant
  proposed: Policy | undefined
  impact: Impact | undefined
  token: FormToken
  version: string
  changed: boolean
}) {
  const t = o.tenant
  const action = `/console/tenants/${t.id}/password-policy`
  const current = policyOf(t.cxengageIdentityProvider)
  const i = o.impact
  return html`<h1>Password policy of ${t.name}</h1>
${o.changed ? html`<div class="notice success" role="status"><p>The password policy was changed.</p></div>` : ''}
<p>Whether members of ${t.name} may sign in with their platform password, or only through the tenant’s
identity providers. Now: <strong>${current ? PASSWORD_POLICY[current] : t.cxengageIdentityProvider}</strong>.</p>
<form method="get" action="${action}">
${selectField({
  name: 'proposed',
  label: 'New password policy',
  value: o.proposed ?? current,
  hint: 'First see what the change would do; nothing changes until you confirm.',
  choices: Object.entries(PASSWORD_POLICY).map(([value, label]) => ({ value, text: label })),
})}
<button type="submit" class="secondary">Check the effect</button>
</form>
${
  i && o.proposed && o.proposed !== current
    ? html`<h2>What the change would do</h2>
<div class="notice${i.losePasswordSignIn ? ' warning' : ''}" role="status" id="impact">
<p><strong>${people(i.losePasswordSignIn)} would lose password sign-in</strong> (of ${people(i.members)}; ${i.passwordSignIn} may use their password now).${
        i.gainPasswordSignIn ? ` ${people(i.gainPasswordSignIn)} would gain it.` : ''
      }</p></div>
<form method="post" action="${action}">${formTokenFields(o.token, o.version)}
<input type="hidden" name="proposed" value="${o.proposed}">
<button type="submit"${i.losePasswordSignIn ? html` class="warning"` : ''}>Change to “${PASSWORD_POLICY[o.proposed]}”</button>
</form>`
    : ''
}
<p><a href="/console/tenants/${t.id}/identity-providers">Identity providers</a></p>`
}

/**
 * A tenant's password policy (API.md §17): the page says first how many members would lose password
 * sign-in (`GET …/password-policy-impact`), then changes it (`PUT /v1/tenants/{t}`, If-Match).
 */
export function passwordPolicyRoutes(router: FastifyInstance, pages: ConsolePages): void {
  const path = '/console/tenants/:tenantId/password-policy'

  router.get(path, { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed): Promise<PageResult> => {
      const read = await readTenantFor(signed, (request.params as { tenantId: string }).tenantId)
      if ('refused' in read) return read.refused
      const query = request.query as Record<string, unknown>
      const proposed = policyOf(query.proposed)
      let impact: Impact | undefined
      if (proposed && proposed !== read.tenant.cxengageIdentityProvider) {
        const { data, error, response } = await signed.api.GET(
          '/v1/tenants/{tenantId}/password-policy-impact',
          {
            params: { path: { tenantId: read.tenant.id }, query: { cxengageIdentityProvider: proposed } },
          },
        )
        if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
        impact = data.result
      }
      return tenantListPage(
        signed,
        read.tenant,
        'Password policy',
        policyBody({
          tenant: read.tenant,
          proposed,
          impact,
          token: signed.form(),
          version: read.etag,
          changed: text(query.done) === 'changed',
        }),
      )
    }),
  )

  router.post(path, { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed): Promise<PageResult> => {
      const { tenantId } = request.params as { tenantId: string }
      const form = request.body as Record<string, unknown>
      const proposed = policyOf(form.proposed)
      const here = `/console/tenants/${tenantId}/password-policy`
      if (!proposed || !UUID.test(tenantId)) return { redirect: here }
      const { data, error, response } = await signed.api.PUT('/v1/tenants/{tenantId}', {
        params: { path: { tenantId } },
        headers: { 'if-match': text(form.version) || '"none"' },
        body: { cxengageIdentityProvider: proposed },
      })
      if (data) return { redirect: `${here}?done=changed` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code === 412) return changedMeanwhilePage(signed, 'tenant', here)
      return refusalPage(signed, refused)
    }),
  )
}
