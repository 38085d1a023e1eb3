import type { paths } from '../../../../generated/openapi.js'
import { html } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import type { FormToken } from '../kit/form-token.js'
import { formTokenFields, selectField } from '../kit/forms.js'
import { Done, Form, OneOf, Query, TenantPath } from '../kit/inputs.js'
import type { ConsolePages, PageResult } from '../kit/pages.js'
import { ifMatch } from '../kit/record-edits.js'
import { called } from '../kit/refusals.js'
import { readTenantFor, tenantListPage } from '../kit/tenant-scope.js'
import { PASSWORD_POLICY } from '../tenants/tenants.views.js'

type Policy = keyof typeof PASSWORD_POLICY
/** A policy asked for: one of the policies, or '' when the form was sent unchanged. */
const Proposed = OneOf(['', ...(Object.keys(PASSWORD_POLICY) as Policy[])])
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
 * A tenant's password policy (docs/console-admin.md "Password policy"): the page says first how many
 * members would lose password sign-in (`GET …/password-policy-impact`), then changes it
 * (`PUT /v1/tenants/{t}`, If-Match).
 */
export function passwordPolicyRoutes(router: TypedApp, pages: ConsolePages): void {
  const path = '/console/tenants/:tenantId/password-policy'

  const pageSchema = {
    hide: true,
    params: TenantPath,
    querystring: Query({ proposed: Proposed, done: Done }),
  }
  router.get(path, { schema: pageSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed): Promise<PageResult> => {
      const read = await readTenantFor(signed, request.params.tenantId)
      const query = request.query
      const proposed = query.proposed || undefined
      let impact: Impact | undefined
      if (proposed && proposed !== read.tenant.cxengageIdentityProvider) {
        const { data } = await called(
          signed.api.GET('/v1/tenants/{tenantId}/password-policy-impact', {
            params: { path: { tenantId: read.tenant.id }, query: { cxengageIdentityProvider: proposed } },
          }),
        )
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
          changed: query.done === 'changed',
        }),
      )
    }),
  )

  const changeSchema = { hide: true, params: TenantPath, body: Form({ proposed: Proposed }) }
  router.post(path, { schema: changeSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed): Promise<PageResult> => {
      const { tenantId } = request.params
      const proposed = request.body.proposed
      const here = `/console/tenants/${tenantId}/password-policy`
      if (!proposed) return { redirect: here }
      await called(
        signed.api.PUT('/v1/tenants/{tenantId}', {
          params: { path: { tenantId } },
          headers: ifMatch(request.body.version),
          body: { cxengageIdentityProvider: proposed },
        }),
        { changed: { what: 'tenant', href: here } },
      )
      return { redirect: `${here}?done=changed` }
    }),
  )
}
