import type { paths } from '../../../../generated/openapi.js'
import { html, type SafeHtml } from '../../../html.js'
import { type Errors, errorSummary, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import { timeOf } from '../kit/time.js'
import type { EventNames, Named } from './audit-names.js'

export type AuditEvent =
  paths['/v1/audit-events']['get']['responses'][200]['content']['application/json']['result'][number]

export const FILTERS = ['action', 'actorId', 'targetId', 'since', 'until'] as const
export type Filters = Partial<Record<(typeof FILTERS)[number], string>>
export const FILTER_LABELS = {
  action: 'Action',
  actor: 'Actor',
  targetId: 'Target ID',
  since: 'From',
  until: 'Before',
}

/** A value of a change as a person reads it; a secret is already "********" in the event itself. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '(none)'
  if (typeof value === 'string') return value === '' ? '(empty)' : value
  return JSON.stringify(value)
}

function changes(event: AuditEvent): SafeHtml {
  const entries = Object.entries(event.changes)
  if (entries.length === 0) return html`—`
  return html`<ul class="plain">${entries.map(
    ([field, pair]) =>
      html`<li><strong>${field}</strong>: ${shown(pair[0])} <span aria-hidden="true">→</span><span class="skip"> changed to </span> ${shown(pair[1])}</li>`,
  )}</ul>`
}

/**
 * An actor or target: its name linking to its page, its kind and id beneath (the id to copy); a record
 * the reader cannot read is its kind and id alone.
 */
function who(n: Named): SafeHtml {
  if (!n.id) return html`${n.kind}`
  const id = html`${n.kind} <code>${n.id}</code>`
  if (n.text === undefined) return id
  const name = n.href ? html`<a href="${n.href}">${n.text}</a>` : html`${n.text}`
  return html`${name}<br><span class="muted">${id}</span>`
}

export function auditBody(o: {
  title: string
  action: string
  /** The actor as the person typed it: an e-mail (resolved to the user's ID) or an ID. */
  actor: string
  filters: Filters
  events: AuditEvent[]
  /** The events' actors and targets by name (audit-names.ts). */
  names: EventNames
  nextCursor?: string | undefined
  errors?: Errors | undefined
}) {
  const f = o.filters
  const query = new URLSearchParams(
    Object.entries({ ...f, actorId: undefined, actor: o.actor }).filter((e): e is [string, string] =>
      Boolean(e[1]),
    ),
  )
  // The export holds the same filtered events, all of them (the API streams them).
  const download = `${o.action}.csv${query.size ? `?${query.toString()}` : ''}`
  if (o.nextCursor) query.set('cursor', o.nextCursor)
  return html`<h1>${o.title}</h1>
${errorSummary(o.errors, FILTER_LABELS)}
<form method="get" action="${o.action}" class="search" role="search" aria-label="Filter the events">
${textField({ name: 'action', label: 'Action', value: f.action, errors: o.errors, hint: 'tenant.updated, or a family: tenant.*' })}
${textField({ name: 'actor', label: 'Actor', value: o.actor, errors: o.errors, hint: 'An e-mail or a user ID' })}
${textField({ name: 'targetId', label: 'Target ID', value: f.targetId, errors: o.errors })}
${textField({ name: 'since', label: 'From', value: f.since, errors: o.errors, hint: 'e.g. 2026-11-01T00:00:00Z' })}
${textField({ name: 'until', label: 'Before', value: f.until, errors: o.errors })}
<button type="submit" class="secondary">Filter</button>
</form>
<p><a href="${download}" download>Download CSV</a> <span class="muted">(every event matching these filters)</span></p>
${
  o.events.length === 0
    ? html`<p>No events match.</p>`
    : table('Events, newest first', ['When', 'Action', 'Actor', 'Target', 'Changes'], o.events, (e) => [
        timeOf(e.occurred),
        { content: e.action, class: 'nowrap' },
        who(o.names.actor(e)),
        who(o.names.target(e)),
        changes(e),
      ])
}
${o.nextCursor ? html`<p><a href="${o.action}?${query.toString()}">Older events</a></p>` : ''}`
}
