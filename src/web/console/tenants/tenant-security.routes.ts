import { html, type SafeHtml } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { type Errors, errorSummary, selectField, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { formTokenFields } from '../kit/forms.js'
import { Cursor, Done, Form, OneOf, Query, TenantPath, Typed } from '../kit/inputs.js'
import { type ConsolePages, type PageResult, permissionsIn, type Signed } from '../kit/pages.js'
import { type PersonRecord, personEmail, personName } from '../kit/readable.js'
import { ifMatch } from '../kit/record-edits.js'
import { called } from '../kit/refusals.js'
import { readTenantFor, type TenantOf, tenantListPage } from '../kit/tenant-scope.js'
import { timeOf } from '../kit/time.js'

/** A member as this page draws them: who, and when a policy requiring a factor stops counting them. */
interface Member extends PersonRecord {
  userId: string
  mfaDeadline: string | null
}

const POLICIES = { optional: 'Optional', required: 'Required' } as const
/** What the trust in the identity provider means, in a sentence; and as a choice, short enough for a phone. */
const TRUST = {
  always: 'Always: a sign-in through the identity provider counts as a second factor',
  asserted: 'Only when the identity provider says it asked for a second factor',
} as const
const TRUST_CHOICES = { always: 'Always', asserted: 'Only when the provider asked for one' } as const
type Policy = keyof typeof POLICIES
type Trust = keyof typeof TRUST

const LABELS = { mfaPolicy: 'Second factor', mfaGraceDays: 'Grace days', mfaAcceptIdp: 'Identity provider' }
/** Members without a factor listed per page; the count reads up to COUNTED of them. */
const PAGE_SIZE = 50
const COUNTED = 1_000

const SecurityForm = Form({
  mfaPolicy: OneOf(['optional', 'required']),
  mfaGraceDays: Typed(8),
  mfaAcceptIdp: OneOf(['always', 'asserted']),
})

/**
 * A tenant's security settings (docs/console.md "Tenant security"): the second-factor policy, its grace
 * days and the trust in the tenant's identity provider, saying first how many members have no second
 * factor and listing them with their deadlines (`GET /v1/tenants/{t}/users?mfa=false`). Saved through
 * `PUT /v1/tenants/{t}` under If-Match, only the fields changed (a policy change is a step-up operation).
 */
export function tenantSecurityRoutes(router: TypedApp, pages: ConsolePages): void {
  const path = '/console/tenants/:tenantId/security'

  async function securityPage(
    signed: Signed,
    tenantId: string,
    o: { cursor?: string | undefined; notice?: string | undefined; values?: Values; errors?: Errors } = {},
  ): Promise<PageResult> {
    const read = await readTenantFor(signed, tenantId)
    const t = read.tenant
    const list = (limit: number, cursor?: string) =>
      called(
        signed.api.GET('/v1/tenants/{tenantId}/users', {
          params: { path: { tenantId: t.id }, query: { mfa: false, limit, ...(cursor ? { cursor } : {}) } },
        }),
      )
    const [counted, page] = await Promise.all([list(COUNTED), list(PAGE_SIZE, o.cursor)])
    const canEdit = permissionsIn(signed, [t.id, ...t.parentIds]).has('MANAGE_TENANT')
    return tenantListPage(
      signed,
      t,
      'Security settings',
      securityBody({
        tenant: t,
        version: read.etag,
        without: counted.data.result.length,
        more: counted.data.nextCursor !== undefined,
        members: page.data.result,
        nextCursor: page.data.nextCursor,
        now: pages.ctx.clock.now(),
        canEdit,
        token: signed.form(),
        notice: o.notice,
        values: o.values ?? valuesOf(t),
        errors: o.errors,
      }),
    )
  }

  const pageSchema = { hide: true, params: TenantPath, querystring: Query({ cursor: Cursor, done: Done }) }
  router.get(path, { schema: pageSchema }, (request, reply) =>
    pages.signedIn(request, reply, (signed) =>
      securityPage(signed, request.params.tenantId, {
        cursor: request.query.cursor || undefined,
        notice: request.query.done === 'saved' ? 'The security settings were saved.' : undefined,
      }),
    ),
  )

  const saveSchema = { hide: true, params: TenantPath, body: SecurityForm }
  router.post(path, { schema: saveSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params
      const form = request.body
      const values: Values = {
        mfaPolicy: form.mfaPolicy ?? 'optional',
        mfaGraceDays: (form.mfaGraceDays ?? '').trim(),
        mfaAcceptIdp: form.mfaAcceptIdp ?? 'always',
      }
      const again = (errors: Errors) => securityPage(signed, tenantId, { values, errors })
      if (!/^\d{1,2}$/.test(values.mfaGraceDays) || Number(values.mfaGraceDays) > 90)
        return again({ mfaGraceDays: 'must be a whole number of days from 0 to 90' })
      const { tenant } = await readTenantFor(signed, tenantId)
      // Only what changed: a policy sent unchanged would still ask for a step-up.
      const body = {
        ...(values.mfaPolicy !== tenant.mfaPolicy ? { mfaPolicy: values.mfaPolicy } : {}),
        ...(Number(values.mfaGraceDays) !== tenant.mfaGraceDays
          ? { mfaGraceDays: Number(values.mfaGraceDays) }
          : {}),
        ...(values.mfaAcceptIdp !== tenant.mfaAcceptIdp ? { mfaAcceptIdp: values.mfaAcceptIdp } : {}),
      }
      const here = `/console/tenants/${tenantId}/security`
      if (Object.keys(body).length > 0) {
        await called(
          signed.api.PUT('/v1/tenants/{tenantId}', {
            params: { path: { tenantId } },
            headers: ifMatch(form.version),
            body,
          }),
          { changed: { what: 'tenant', href: here }, form: again },
        )
      }
      return { redirect: `${here}?done=saved` }
    }),
  )
}

interface Values {
  mfaPolicy: Policy
  mfaGraceDays: string
  mfaAcceptIdp: Trust
}

function valuesOf(t: TenantOf): Values {
  return { mfaPolicy: t.mfaPolicy, mfaGraceDays: String(t.mfaGraceDays), mfaAcceptIdp: t.mfaAcceptIdp }
}

function securityBody(o: {
  tenant: TenantOf
  version: string
  without: number
  more: boolean
  members: Member[]
  nextCursor: string | undefined
  now: Date
  canEdit: boolean
  token: FormToken
  notice: string | undefined
  values: Values
  errors: Errors | undefined
}): SafeHtml {
  const t = o.tenant
  const effective = t.mfaPolicyEffective
  const count = `${o.without.toLocaleString('en')}${o.more ? ' or more' : ''}`
  const people = o.without === 1 && !o.more ? 'member has' : 'members have'
  const inherited = effective && effective.policy === 'required' && effective.tenantId !== t.id
  return html`${errorSummary(o.errors, LABELS)}<h1>Security settings of ${t.name}</h1>
${o.notice ? html`<div class="notice success" role="status"><p>${o.notice}</p></div>` : ''}
<div class="notice${o.without > 0 && effective?.policy === 'required' ? ' warning' : ''}" id="without-factor">
<p><strong>${count} ${people} no second factor.</strong>${
    effective?.policy === 'required'
      ? ' Each is refused in this tenant once their deadline has passed.'
      : ' Were a second factor required, each would be refused here after the grace days.'
  }</p></div>
<dl class="summary">
<dt>Policy in force</dt><dd>${
    effective?.policy === 'required'
      ? html`Second factor required${inherited ? html` (set by <a href="/console/tenants/${effective.tenantId}/security">a parent tenant</a>)` : ''}${
          effective.since ? html`, since ${timeOf(effective.since)}` : ''
        }; ${effective.graceDays} grace days`
      : 'Second factor optional'
  }</dd>
<dt>Identity provider</dt><dd>${TRUST[effective?.acceptIdp ?? t.mfaAcceptIdp]}</dd>
</dl>
${
  o.canEdit
    ? html`<h2>Change the settings</h2>
<form method="post" action="/console/tenants/${t.id}/security" novalidate>${formTokenFields(o.token, o.version)}
${selectField({
  name: 'mfaPolicy',
  label: 'Second factor',
  hint: `Required: members of ${t.name} and its sub-tenants need an authenticator app or a passkey to act here, after their grace days. A sub-tenant can only tighten its parent’s policy.`,
  value: o.values.mfaPolicy,
  errors: o.errors,
  choices: Object.entries(POLICIES).map(([value, text]) => ({ value, text })),
})}
${textField({
  name: 'mfaGraceDays',
  label: 'Grace days',
  hint: 'Days a member keeps working without a second factor, from when the policy is turned on or they joined, whichever is later (0 to 90).',
  value: o.values.mfaGraceDays,
  errors: o.errors,
})}
${selectField({
  name: 'mfaAcceptIdp',
  label: 'Identity provider',
  hint: 'Whether a sign-in through the tenant’s identity provider counts as a second factor: always, or only when the provider says it asked for a second factor itself.',
  value: o.values.mfaAcceptIdp,
  errors: o.errors,
  choices: Object.entries(TRUST_CHOICES).map(([value, text]) => ({ value, text })),
})}
<button type="submit">Save the settings</button>
</form>`
    : ''
}
<h2 id="members-without">Members without a second factor</h2>
${
  o.members.length === 0
    ? html`<p>Every member has a second factor.</p>`
    : table('Members without a second factor', ['Name', 'E-mail', 'Deadline'], o.members, (m) => [
        html`<a href="/console/tenants/${t.id}/members/${m.userId}">${personName(m)}</a>`,
        personEmail(m),
        deadline(m.mfaDeadline, o.now),
      ])
}
${o.nextCursor ? html`<p><a href="/console/tenants/${t.id}/security?cursor=${encodeURIComponent(o.nextCursor)}#members-without">Next page</a></p>` : ''}`
}

/** A member's deadline: none while the policy is optional; a past one means refused here now. */
function deadline(at: string | null, now: Date): SafeHtml | string {
  if (!at) return 'None while the policy is optional'
  return Date.parse(at) <= now.getTime()
    ? html`${timeOf(at)} <strong class="tag failed">Passed: refused now</strong>`
    : html`${timeOf(at)}`
}
