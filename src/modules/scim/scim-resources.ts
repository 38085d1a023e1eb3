import type { Membership } from '../memberships/memberships.schemas.js'
import type { ScimGroupRow, ScimUserRow } from './scim.repository.js'
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from './scim-attributes.js'
import type { Stored } from './scim-values.js'

/**
 * Stored rows → SCIM resources (docs/scim.md), and the `attributes` / `excludedAttributes` projection.
 * `meta.version` (and the ETag) is the resource's row version: for a user, its membership's `updated`
 * and its SCIM row's version together, so a change through /v1 moves it too.
 */

export type Resource = Record<string, unknown>

/** What a SCIM user shows of its membership and platform user. */
export type ScimMember = Pick<
  Membership,
  'userId' | 'email' | 'firstName' | 'lastName' | 'status' | 'created' | 'updated'
>

export interface UserView {
  membership: ScimMember
  scim: ScimUserRow | undefined
  groups: { id: string; display_name: string }[]
}

export function userVersion(view: Pick<UserView, 'membership' | 'scim'>): string {
  return `W/"${Date.parse(view.membership.updated).toString(36)}.${view.scim?.version ?? 0}"`
}

export function groupVersion(row: Pick<ScimGroupRow, 'version' | 'updated'>): string {
  return `W/"${row.updated.getTime().toString(36)}.${row.version}"`
}

/** What a member looks like when SCIM never touched it: its platform names and e-mail. */
export function derivedAttributes(m: ScimMember): Stored {
  const name: Stored = {}
  if (m.firstName) name.givenName = m.firstName
  if (m.lastName) name.familyName = m.lastName
  if (m.firstName || m.lastName) name.formatted = `${m.firstName} ${m.lastName}`.trim()
  return {
    userName: m.email,
    ...(Object.keys(name).length > 0 ? { name } : {}),
    emails: [{ value: m.email, type: 'work', primary: true }],
  }
}

/** `active` as read back: false unless accepted; else true when it was ever set; absent otherwise. */
export function activeOf(view: Pick<UserView, 'membership' | 'scim'>): boolean | undefined {
  if (view.membership.status !== 'accepted') return false
  return view.scim?.active === null || view.scim?.active === undefined ? undefined : true
}

export function toScimUser(view: UserView, baseUrl: string): Resource {
  const stored = (view.scim?.attributes as Stored | undefined) ?? derivedAttributes(view.membership)
  const { externalId, [ENTERPRISE_SCHEMA]: enterprise, ...core } = stored
  const active = activeOf(view)
  const created =
    view.scim && view.scim.created.toISOString() < view.membership.created
      ? view.scim.created.toISOString()
      : view.membership.created
  const lastModified = [view.membership.updated, view.scim?.updated.toISOString() ?? '']
    .sort()
    .at(-1) as string
  return {
    schemas: enterprise ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA],
    id: view.membership.userId,
    ...(externalId !== undefined ? { externalId } : {}),
    ...core,
    ...(active !== undefined ? { active } : {}),
    ...(view.groups.length > 0
      ? {
          groups: view.groups.map((g) => ({
            value: g.id,
            $ref: `${baseUrl}/Groups/${g.id}`,
            display: g.display_name,
          })),
        }
      : {}),
    ...(enterprise ? { [ENTERPRISE_SCHEMA]: enterprise } : {}),
    meta: {
      resourceType: 'User',
      created,
      lastModified,
      location: `${baseUrl}/Users/${view.membership.userId}`,
      version: userVersion(view),
    },
  }
}

export function toScimGroup(row: ScimGroupRow, members: string[], baseUrl: string): Resource {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    displayName: row.display_name,
    ...(members.length > 0
      ? { members: members.map((value) => ({ value, $ref: `${baseUrl}/Users/${value}`, type: 'User' })) }
      : {}),
    meta: {
      resourceType: 'Group',
      created: row.created.toISOString(),
      lastModified: row.updated.toISOString(),
      location: `${baseUrl}/Groups/${row.id}`,
      version: groupVersion(row),
    },
  }
}

const ALWAYS = new Set(['id', 'schemas', 'meta', 'username'])

/** A comma-separated attribute list → lower-cased paths, each without its core schema prefix. */
export function attributeList(text: string | undefined): string[] | undefined {
  if (text === undefined || text.trim() === '') return undefined
  return text
    .split(',')
    .map((a) => a.trim().toLowerCase())
    .filter((a) => a !== '')
    .map((a) => a.replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/, ''))
}

/**
 * `attributes` (only these, plus those always returned) and `excludedAttributes` (all but these) on a
 * resource. Paths are `attr`, `attr.sub`, an extension URI or `urn:…:attr[.sub]`, case-insensitively.
 */
export function project(resource: Resource, include?: string[], exclude?: string[]): Resource {
  if (!include && !exclude) return resource
  const out: Resource = {}
  for (const [key, value] of Object.entries(resource)) {
    const lower = key.toLowerCase()
    if (ALWAYS.has(lower)) {
      out[key] = value
      continue
    }
    if (include) {
      const wanted = include.filter(
        (p) => p === lower || p.startsWith(`${lower}.`) || p.startsWith(`${lower}:`),
      )
      if (wanted.length === 0) continue
      if (wanted.includes(lower) || !value || typeof value !== 'object') {
        out[key] = value
        continue
      }
      const subs = wanted.map((p) => p.slice(lower.length + 1))
      const picked = pickSubs(value, subs)
      if (picked !== undefined) out[key] = picked
      continue
    }
    const dropped = (exclude as string[]).filter(
      (p) => p === lower || p.startsWith(`${lower}.`) || p.startsWith(`${lower}:`),
    )
    if (dropped.includes(lower)) continue
    if (dropped.length > 0 && value && typeof value === 'object') {
      out[key] = omitSubs(
        value,
        dropped.map((p) => p.slice(lower.length + 1)),
      )
      continue
    }
    out[key] = value
  }
  return out
}

function pickSubs(value: unknown, subs: string[]): unknown {
  if (Array.isArray(value)) {
    const list = value
      .map((v) => pickSubs(v, subs))
      .filter((v) => v !== undefined && Object.keys(v as object).length > 0)
    return list.length > 0 ? list : undefined
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const lower = k.toLowerCase()
    const deeper = subs.filter((s) => s === lower || s.startsWith(`${lower}.`))
    if (deeper.length === 0) continue
    out[k] =
      deeper.includes(lower) || !v || typeof v !== 'object'
        ? v
        : pickSubs(
            v,
            deeper.map((s) => s.slice(lower.length + 1)),
          )
  }
  return Object.keys(out).length > 0 ? out : undefined
}

function omitSubs(value: unknown, subs: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => omitSubs(v, subs))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const lower = k.toLowerCase()
    if (subs.includes(lower)) continue
    const deeper = subs.filter((s) => s.startsWith(`${lower}.`)).map((s) => s.slice(lower.length + 1))
    out[k] = deeper.length > 0 && v && typeof v === 'object' ? omitSubs(v, deeper) : v
  }
  return out
}
