import { listMemberships } from '../memberships/memberships.service.js'
import { normalizeEmail } from '../users/user-rules.js'
import { findUserByEmail } from '../users/users.repository.js'
import { findScimUsersBy, groupsOfUsers, listScimUsers, type ScimUserRow } from './scim.repository.js'
import type { ScimCall } from './scim-context.js'
import { requireScim } from './scim-context.js'
import { ScimError } from './scim-error.js'
import { type Comparison, type Filter, matches } from './scim-filter.js'
import { type Resource, toScimUser, type UserView } from './scim-resources.js'
import { loadView } from './scim-users.service.js'
import type { Stored } from './scim-values.js'

/**
 * Finding SCIM users (API.md §16): an `eq` on userName, an e-mail, externalId or id is an index
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
  const { ctx, tenantId } = call
  const key = eq.valueFilter ? 'emails.value' : `${eq.attr}${eq.sub ? `.${eq.sub}` : ''}`
  // user id → its SCIM row when the look-up found one (loadView then does not read it again).
  const found = new Map<string, ScimUserRow | undefined>()
  if (key === 'id') found.set(value.toLowerCase(), undefined)
  else if (key === 'externalid')
    for (const r of await findScimUsersBy(ctx.db, tenantId, { externalId: value })) found.set(r.user_id, r)
  else {
    const email = normalizeEmail(value)
    const lookup = key === 'username' ? { userNameKey: value.toLowerCase() } : { emailKey: email }
    const rows = await findScimUsersBy(ctx.db, tenantId, lookup)
    for (const r of rows) found.set(r.user_id, r)
    // A member SCIM never touched answers to its e-mail as userName and e-mail (unless the row found
    // already holds that e-mail: then it is that person).
    if (!rows.some((r) => r.email_key === email)) {
      const user = await findUserByEmail(ctx.db, email)
      if (user && !found.has(user.id)) found.set(user.id, undefined)
    }
  }
  const views: UserView[] = []
  for (const [id, row] of found) {
    if (!/^[0-9a-f-]{36}$/.test(id)) continue
    try {
      views.push(await loadView(call, id, row))
    } catch (error) {
      if (!(error instanceof ScimError && error.status === 404)) throw error
    }
  }
  return views
}

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
