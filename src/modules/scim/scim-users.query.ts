import { listMemberships } from '../memberships/memberships.service.js'
import { normalizeEmail } from '../users/user-rules.js'
import { groupsOfUsers, listScimUsers } from './scim.repository.js'
import type { ScimCall } from './scim-context.js'
import { requireScim } from './scim-context.js'
import { type Comparison, type Filter, matches } from './scim-filter.js'
import { type Resource, toScimUser, type UserView } from './scim-resources.js'
import { findUserViews, type ViewLookup } from './scim-user-reads.js'
import type { Stored } from './scim-values.js'

/**
 * Finding SCIM users (docs/scim.md): an `eq` on userName, an e-mail, externalId or id is an index
 * look-up (Okta and Entra ID ask `userName eq` for every user of every sync); any other filter reads
 * the tenant's members once. The filter then decides on each candidate, in order of creation.
 */

export const USER_FILTER_PATHS = new Set([
  'id',
  'username',
  'externalid',
  'emails.value',
  'emails[type].value',
  'active',
])
const CASE_EXACT = new Set(['id', 'externalid'])

/** The filter's subject for a user: lower-cased keys, the listed attributes only. */
function subjectOf(v: UserView, resource: Resource): Record<string, unknown> {
  const emails = ((resource.emails as Stored[] | undefined) ?? []).map((e) => ({
    value: e.value,
    type: e.type,
    primary: e.primary,
  }))
  return {
    id: v.membership.userId,
    username: resource.userName,
    externalid: resource.externalId,
    emails,
    active: resource.active ?? v.membership.status === 'accepted',
  }
}

/** The candidates an indexed comparison narrows to, or undefined when the filter needs a scan. */
async function candidates(call: ScimCall, filter: Filter | undefined): Promise<UserView[] | undefined> {
  const eq = filter?.find((c) => c.op === 'eq' && typeof c.value === 'string' && indexable(c))
  if (!eq) return undefined
  const value = eq.value as string
  const key = eq.valueFilter ? 'emails.value' : `${eq.attr}${eq.sub ? `.${eq.sub}` : ''}`
  if (key === 'id') {
    const id = value.toLowerCase()
    return UUID.test(id) ? findUserViews(call.ctx.db, call.tenantId, { userId: id }) : []
  }
  const lookup: ViewLookup =
    key === 'externalid'
      ? { externalId: value }
      : key === 'username'
        ? { userNameKey: value.toLowerCase(), email: normalizeEmail(value) }
        : { email: normalizeEmail(value) }
  return findUserViews(call.ctx.db, call.tenantId, lookup)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function indexable(c: Comparison): boolean {
  if (c.valueFilter) return c.attr === 'emails' && c.sub === 'value'
  return (
    (['id', 'username', 'externalid'].includes(c.attr) && c.sub === undefined) ||
    (c.attr === 'emails' && c.sub === 'value')
  )
}

/** Every user of the tenant matching the filter, in order of creation. */
export async function findScimUsers(call: ScimCall, filter: Filter | undefined): Promise<Resource[]> {
  await requireScim(call, false)
  let views = await candidates(call, filter)
  if (!views) {
    const page = await listMemberships(call.ctx, call.actor, call.tenantId, {})
    const rows = new Map((await listScimUsers(call.ctx.db, call.tenantId)).map((r) => [r.user_id, r]))
    const groups = await groupsOfUsers(
      call.ctx.db,
      call.tenantId,
      page.items.map((m) => m.userId),
    )
    views = page.items.map((m) => ({
      membership: m,
      scim: rows.get(m.userId),
      groups: groups.get(m.userId) ?? [],
    }))
  }
  const out: { created: string; id: string; resource: Resource }[] = []
  for (const v of views) {
    const resource = toScimUser(v, call.baseUrl)
    if (filter && !matches(subjectOf(v, resource), filter, false, CASE_EXACT)) continue
    out.push({ created: (resource.meta as { created: string }).created, id: v.membership.userId, resource })
  }
  out.sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : 1))
  return out.map((o) => o.resource)
}
