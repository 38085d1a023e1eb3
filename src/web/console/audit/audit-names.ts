import type { Signed } from '../kit/pages.js'
import { type PersonRecord, personEmail, personName, readableOr } from '../kit/readable.js'
import type { AuditEvent } from './audit.views.js'

/**
 * Who did it and to what, in the words a person looks for (docs/console-admin.md "Audit"): an event's
 * actor and target are ids; the audit page names them by reading each distinct record once through the
 * API as the reader (never the services), so a record the reader may not see, or one that is gone, stays
 * an id with its kind ("API key 0193…") — the page never shows what the reader could not read.
 */

/** An actor or target as the page shows it. */
export interface Named {
  /** What the record is, in words: "User", "API key", "Tenant", … */
  kind: string
  /** The record's id, shown beside the name for copying (none for the system). */
  id: string | null
  /** The name to read (an e-mail, a name, a URL); undefined when the reader cannot read the record. */
  text?: string | undefined
  /** The record's console page, when it has one. */
  href?: string | undefined
}

export interface EventNames {
  actor(event: AuditEvent): Named
  target(event: AuditEvent): Named
}

const KINDS: Record<string, string> = {
  user: 'User',
  apiKey: 'API key',
  system: 'System',
  membership: 'Member',
  tenant: 'Tenant',
  role: 'Role',
  webhook: 'Webhook',
  integration: 'Integration',
  identityProvider: 'Identity provider',
  scimGroup: 'SCIM group',
}

export const kindOf = (type: string): string => KINDS[type] ?? type

/** A record read through the API: the person (for users and members) or the name, and its page. */
interface Found {
  person?: PersonRecord
  name?: string
  href?: string
}

/** At most this many API reads at once: a page of 50 events names at most ~100 records. */
const PARALLEL_READS = 8

/**
 * Reads the records the events name — each distinct (kind, tenant, id) once — and answers how the page
 * shows each event's actor and target.
 */
export async function eventNames(signed: Signed, events: AuditEvent[]): Promise<EventNames> {
  const reads = new Map<string, () => Promise<Found | undefined>>()
  const found = new Map<string, Found | undefined>()
  const api = signed.api

  const tenantOf = memo(async (tenantId: string) => {
    const { data } = await api.GET('/v1/tenants/{tenantId}', { params: { path: { tenantId } } })
    return data?.result
  })
  const scimGroupsOf = memo(async (tenantId: string) => {
    const { data } = await api.GET('/v1/tenants/{tenantId}/scim/groups', { params: { path: { tenantId } } })
    return data?.result ?? []
  })

  async function member(tenantId: string, userId: string): Promise<Found | undefined> {
    const { data } = await api.GET('/v1/tenants/{tenantId}/users/{userId}', {
      params: { path: { tenantId, userId } },
    })
    return data && { person: data.result, href: `/console/tenants/${tenantId}/members/${userId}` }
  }

  /** A platform user; failing that (not the reader's to see), the member of the event's tenant. */
  async function person(tenantId: string | null, userId: string): Promise<Found | undefined> {
    const { data } = await api.GET('/v1/users/{userId}', { params: { path: { userId } } })
    if (data) return { person: data.result, href: `/console/users/${userId}` }
    return tenantId ? member(tenantId, userId) : undefined
  }

  /** An API key belongs to the event's tenant or, acting in a sub-tenant, to one of its ancestors. */
  async function apiKey(tenantId: string | null, keyId: string): Promise<Found | undefined> {
    if (!tenantId) return undefined
    const ancestors = (await tenantOf(tenantId))?.parentIds ?? []
    for (const owner of [tenantId, ...[...ancestors].reverse()]) {
      const { data } = await api.GET('/v1/tenants/{tenantId}/api-keys/{keyId}', {
        params: { path: { tenantId: owner, keyId } },
      })
      if (data) return { name: data.result.name, href: `/console/tenants/${owner}/api-keys` }
    }
    return undefined
  }

  async function record(type: string, tenantId: string | null, id: string): Promise<Found | undefined> {
    if (type === 'user') return person(tenantId, id)
    if (type === 'apiKey') return apiKey(tenantId, id)
    if (type === 'tenant') {
      const tenant = await tenantOf(id)
      return tenant && { name: tenant.name, href: `/console/tenants/${id}` }
    }
    if (type === 'role') {
      const { data } = tenantId
        ? await api.GET('/v1/tenants/{tenantId}/roles/{roleId}', {
            params: { path: { tenantId, roleId: id } },
          })
        : await api.GET('/v1/roles/{roleId}', { params: { path: { roleId: id } } })
      if (!data) return undefined
      const role = data.result
      // Built-in and platform roles have no page; a tenant's own role has its edit page.
      const page =
        role.tenantId && !role.builtIn ? `/console/tenants/${role.tenantId}/roles/${id}/edit` : undefined
      return { name: role.name, ...(page ? { href: page } : {}) }
    }
    if (!tenantId) return undefined
    const base = `/console/tenants/${tenantId}`
    const path = { tenantId }
    switch (type) {
      case 'membership':
        // A membership since removed still names its person, when the reader may read them.
        return (await member(tenantId, id)) ?? person(null, id)
      case 'webhook': {
        const { data } = await api.GET('/v1/tenants/{tenantId}/webhooks/{webhookId}', {
          params: { path: { ...path, webhookId: id } },
        })
        return data && { name: data.result.url, href: `${base}/webhooks/${id}` }
      }
      case 'integration': {
        const { data } = await api.GET('/v1/tenants/{tenantId}/integrations/{integrationId}', {
          params: { path: { ...path, integrationId: id } },
        })
        return data && { name: data.result.name, href: `${base}/integrations/${id}` }
      }
      case 'identityProvider': {
        const { data } = await api.GET('/v1/tenants/{tenantId}/identity-providers/{id}', {
          params: { path: { ...path, id } },
        })
        return data && { name: data.result.name, href: `${base}/identity-providers/${id}` }
      }
      case 'scimGroup': {
        const group = (await scimGroupsOf(tenantId)).find((g) => g.id === id)
        return group && { name: group.displayName, href: `${base}/scim` }
      }
      default:
        return undefined
    }
  }

  const keyOf = (type: string, tenantId: string | null, id: string) => `${type} ${tenantId ?? '-'} ${id}`
  function ask(type: string, tenantId: string | null, id: string | null): void {
    if (!id || type === 'system') return
    const key = keyOf(type, tenantId, id)
    if (!reads.has(key)) reads.set(key, () => record(type, tenantId, id))
  }
  for (const e of events) {
    ask(e.actor.type, e.tenantId, e.actor.id)
    ask(e.target.type, e.tenantId, e.target.id)
  }
  await inBatches([...reads], PARALLEL_READS, async ([key, read]) => {
    found.set(key, await read())
  })

  function named(type: string, tenantId: string | null, id: string | null, asActor: boolean): Named {
    const kind = kindOf(type)
    const one = id ? found.get(keyOf(type, tenantId, id)) : undefined
    if (!one) return { kind, id }
    // The actor is named by e-mail (who signed in); a target person by name, as their page is titled.
    const text = one.person
      ? asActor
        ? personEmail(one.person)
        : personName(one.person)
      : readableOr(one.name, kind)
    return { kind, id, text, href: one.href }
  }
  return {
    actor: (e) => named(e.actor.type, e.tenantId, e.actor.id, true),
    target: (e) => named(e.target.type, e.tenantId, e.target.id, false),
  }
}

/** A read made once per argument, however many events ask for it. */
function memo<T>(read: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const cache = new Map<string, Promise<T>>()
  return (key) => {
    let answer = cache.get(key)
    if (!answer) {
      answer = read(key)
      cache.set(key, answer)
    }
    return answer
  }
}

/** Runs `work` over the items, at most `parallel` at a time. */
async function inBatches<T>(items: T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T)
  }
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker))
}
