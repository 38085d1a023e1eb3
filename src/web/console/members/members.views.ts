import type { paths } from '../../../../generated/openapi.js'
import { html, type SafeHtml } from '../../../html.js'
import { type Choice, type Errors, errorSummary, selectField, textArea } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { actionButton, formTokenFields } from '../kit/forms.js'
import { type PersonRecord, personEmail, personFullName, personName } from '../kit/readable.js'

/** A membership as the pages show it (the list's items; the single read has the same fields and more). */
export type Member = Omit<
  paths['/v1/tenants/{tenantId}/users/{userId}']['get']['responses'][200]['content']['application/json']['result'],
  'invitationToken'
>
export type Role =
  paths['/v1/tenants/{tenantId}/roles']['get']['responses'][200]['content']['application/json']['result'][number]

export const STATUS_FILTERS = ['pending', 'invited', 'accepted', 'disabled'] as const

/** "expires in 23 h", "expires in 40 min", "expired": the time left on an invitation link. */
export function timeLeft(expiry: string | null, now: Date): string {
  if (!expiry) return '—'
  const ms = new Date(expiry).getTime() - now.getTime()
  if (ms <= 0) return 'expired'
  const hours = Math.floor(ms / 3_600_000)
  if (hours >= 48) return `expires in ${Math.floor(hours / 24)} days`
  if (hours >= 1) return `expires in ${hours} h`
  return `expires in ${Math.max(1, Math.floor(ms / 60_000))} min`
}

/** The invitation e-mail's delivery in words. */
export function mailState(status: string | null): SafeHtml | string {
  if (!status) return '—'
  return html`<span class="tag ${status}">${status}</span>`
}

/** The status actions a membership in this state offers (each a PUT of `status`, or the removal). */
export function actionsFor(m: Member, base: string, form: () => FormToken): SafeHtml[] {
  const to = (status: string, textLabel: string) =>
    actionButton(`${base}/${m.userId}/status`, textLabel, form(), { status })
  const out: SafeHtml[] = []
  switch (m.invitationStatus) {
    case 'pending':
      out.push(to('invited', 'Send invitation'), to('accepted', 'Accept now'))
      break
    case 'invited':
    case 'expired':
      out.push(to('invited', 'Resend'), to('accepted', 'Accept now'), to('pending', 'Cancel invitation'))
      break
    case 'disabled':
      out.push(to('accepted', 'Re-enable'))
      break
    default:
      out.push(to('disabled', 'Disable'))
  }
  out.push(actionButton(`${base}/${m.userId}/remove`, 'Remove', form(), {}, 'warning'))
  return out
}

export function membersBody(o: {
  tenant: { id: string; name: string }
  members: Member[]
  status: string
  q: string
  now: Date
  canManage: boolean
  form: () => FormToken
  nextCursor?: string | undefined
  notice?: string | undefined
}) {
  const base = `/console/tenants/${o.tenant.id}/members`
  const filterChoices: Choice[] = [
    { value: '', text: 'Any status' },
    ...STATUS_FILTERS.map((s) => ({ value: s, text: s })),
  ]
  return html`<h1>Members of ${o.tenant.name}</h1>
${o.notice ? html`<div class="notice success" role="status"><p>${o.notice}</p></div>` : ''}
${o.canManage ? html`<p><a class="button" href="${base}/invite">Invite people</a></p>` : ''}
<form method="get" action="${base}" class="search" role="search" aria-label="Filter members">
${selectField({ name: 'status', label: 'Status', value: o.status, choices: filterChoices })}
<div class="field"><label for="q">Search</label><input type="search" id="q" name="q" value="${o.q}" autocomplete="off"></div>
<button type="submit" class="secondary">Filter</button>
</form>
${
  o.members.length === 0
    ? html`<p>No members match.</p>`
    : table(
        'Members',
        ['Person', 'Role', 'Status', 'E-mail', 'Link', ...(o.canManage ? ['Actions'] : [])],
        o.members,
        (m) => [
          personCell(`${base}/${m.userId}`, m),
          m.roleName,
          m.invitationStatus,
          mailState(m.invitationEmailStatus),
          m.status === 'invited' ? timeLeft(m.invitationExpiryDate, o.now) : '—',
          ...(o.canManage ? [html`<div class="actions">${actionsFor(m, base, o.form)}</div>`] : []),
        ],
      )
}
${o.nextCursor ? html`<p><a href="${base}?status=${o.status}&amp;q=${encodeURIComponent(o.q)}&amp;cursor=${o.nextCursor}">Next page</a></p>` : ''}`
}

export function inviteForm(o: {
  action: string
  token: FormToken
  roles: Choice[]
  values: { emails: string; roleId: string; mode: string }
  errors?: Errors | undefined
}) {
  return html`${errorSummary(o.errors, { emails: 'E-mail addresses', roleId: 'Role' })}
<form method="post" action="${o.action}" novalidate>
${formTokenFields(o.token)}
${textArea({ name: 'emails', label: 'E-mail addresses', hint: 'One per line or comma-separated', value: o.values.emails, errors: o.errors, rows: 6 })}
${selectField({ name: 'roleId', label: 'Role', value: o.values.roleId, errors: o.errors, choices: o.roles })}
<fieldset><legend>How they join</legend>
<div class="check"><input type="radio" id="mode-invited" name="mode" value="invited"${o.values.mode !== 'accepted' ? html` checked` : ''}><label for="mode-invited">Send each an invitation e-mail</label></div>
<div class="check"><input type="radio" id="mode-accepted" name="mode" value="accepted"${o.values.mode === 'accepted' ? html` checked` : ''}><label for="mode-accepted">Add them as members at once</label></div>
</fieldset>
<button type="submit">Invite</button>
</form>`
}

export function inviteResults(
  tenant: { id: string; name: string },
  results: { email: string; outcome: string; ok: boolean }[],
) {
  const ok = results.filter((r) => r.ok).length
  return html`<h1>Invitations to ${tenant.name}</h1>
<div class="notice ${ok === results.length ? 'success' : 'warning'}" role="status"><p>${ok} of ${results.length} done.</p></div>
${table('A result per person', ['E-mail', 'Result'], results, (r) => [r.email, r.outcome])}
<p><a href="/console/tenants/${tenant.id}/members">Back to the members</a></p>`
}

export function memberBody(o: {
  tenant: { id: string; name: string }
  member: Member
  roles: Choice[]
  token: FormToken
  version: string
  now: Date
  form: () => FormToken
  canManage: boolean
  errors?: Errors | undefined
}) {
  const m = o.member
  const base = `/console/tenants/${o.tenant.id}/members`
  return html`${errorSummary(o.errors, { roleId: 'Role' })}<h1>${personName(m)}</h1>
<dl class="summary">
<dt>E-mail</dt><dd>${m.email}</dd>
<dt>Role</dt><dd>${m.roleName}</dd>
<dt>Status</dt><dd>${m.invitationStatus}</dd>
<dt>Invitation e-mail</dt><dd>${mailState(m.invitationEmailStatus)}</dd>
<dt>Link</dt><dd>${m.status === 'invited' ? timeLeft(m.invitationExpiryDate, o.now) : '—'}</dd>
</dl>
<p><a href="/console/tenants/${o.tenant.id}/history?targetId=${m.userId}">History</a></p>
${
  o.canManage
    ? html`<h2>Change role</h2>
<form method="post" action="${base}/${m.userId}/role" novalidate>
${formTokenFields(o.token, o.version)}
${selectField({ name: 'roleId', label: 'Role', value: m.roleId, errors: o.errors, choices: o.roles })}
<button type="submit">Change role</button>
</form>
<h2>Actions</h2><div class="actions">${actionsFor(m, base, o.form)}</div>`
    : ''
}`
}

/** A member's name linking to their page, the e-mail beneath; the e-mail alone when they have no name. */
function personCell(href: string, m: PersonRecord) {
  const name = personFullName(m)
  return name
    ? html`<a href="${href}">${name}</a><br><span class="muted">${m.email}</span>`
    : html`<a href="${href}">${personEmail(m)}</a>`
}
