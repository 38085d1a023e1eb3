import { CompiledQuery, type Kysely } from 'kysely'
import type { Database, MembershipStatus } from '../../db/schema.js'
import type { ScimUserRow } from './scim.repository.js'
import type { UserView } from './scim-resources.js'

/**
 * A SCIM user as one statement reads it (docs/scim.md): the membership, the platform user's names, the
 * SCIM row and the groups, for a user id or an index look-up — by userName, e-mail or externalId. Okta and
 * Entra ID look every user up by userName on every sync, and three reads were most of that request's cost
 * (docs/performance.md, "SCIM creates and reads"). Each look-up's text is a constant, so it is prepared once per
 * connection (db/prepared-pool.ts) and never built again.
 */

/** Which users a read starts from: `$1` is always the tenant. */
const CANDIDATES = {
  // A user id.
  userId: 'select $2::uuid as user_id',
  // The SCIM user with this userName; and a member SCIM never touched answers to its e-mail as userName
  // — unless the row found holds that e-mail already: then it is that person.
  userName: `select user_id from scim_users where tenant_id = $1 and user_name_key = $2
    union
    select id from users where email = $3 and not exists (
      select 1 from scim_users where tenant_id = $1 and user_name_key = $2 and email_key = $3)`,
  // The SCIM user with this e-mail — its own, or any of its addresses (`emails.value eq` matches any
  // value, RFC 7644 §3.4.2.2; migration 0016 indexes them) — else the member with it. The addresses are
  // probed in a subquery of their own, tenant checked outside (`offset 0`): given the tenant, a plan chosen
  // while statistics lagged read every SCIM row of the tenant through the tenant's own index and tested
  // each (as viewsOf says below; docs/performance.md, "SCIM creates and reads").
  email: `select user_id from scim_users where tenant_id = $1 and email_key = $2
    union
    select user_id from (
      select tenant_id, user_id from scim_users where scim_email_keys(attributes) @> array[$2::text] offset 0
    ) listing where tenant_id = $1
    union
    select id from users where email = $2 and not exists (
      select 1 from scim_users where tenant_id = $1 and email_key = $2)`,
  externalId: 'select user_id from scim_users where tenant_id = $1 and external_id = $2',
} as const

/** A user's groups as JSON, each probed by its whole key (see viewsOf). */
function groupsOf(userId: string): string {
  return `coalesce((
        select json_agg(json_build_object('id', g.id, 'display_name', g.display_name) order by g.created)
        from scim_group_members gm
        cross join lateral (
          select id, display_name, created from scim_groups where tenant_id = $1 and id = gm.group_id offset 0
        ) g
        where gm.tenant_id = $1 and gm.user_id = ${userId}), '[]')`
}

/**
 * The read around the candidates: members only, with their SCIM row (if any) and groups. The SCIM row and
 * each group are probed by their whole primary key in a subquery of their own (`offset 0` keeps PostgreSQL
 * from folding it into a join): as a join, the plan cached for the prepared text — chosen while the tables
 * were small or never analysed, as with autovacuum off or behind — read every SCIM row of the tenant and
 * filtered, so a find grew with the tenant's directory (docs/performance.md, "SCIM creates and reads").
 */
function viewsOf(candidates: string): string {
  return `with candidates as (${candidates})
    select tu.user_id, tu.status, tu.created, tu.updated, u.email, u.first_name, u.last_name,
      s.user_id is not null as has_scim, s.user_name, s.user_name_key, s.email_key, s.external_id,
      s.active, s.attributes, s.provisioned, s.created as scim_created, s.updated as scim_updated,
      s.version,
      ${groupsOf('c.user_id')} as groups
    from candidates c
    join tenant_users tu on tu.tenant_id = $1 and tu.user_id = c.user_id
    join users u on u.id = tu.user_id
    left join lateral (
      select * from scim_users where tenant_id = $1 and user_id = c.user_id offset 0
    ) s on true`
}

/**
 * The look-up Okta and Entra ID make for every user of every sync — `userName eq` of a user SCIM made —
 * as one plain join from the SCIM row's unique key: no union, sort or sub-plan to start, and a quarter
 * cheaper to plan and run than the userName look-up around candidates (docs/performance.md, "SCIM creates
 * and reads"). Enough whenever the row found holds the e-mail asked for, as its userName or its user's
 * e-mail: the look-up's second branch then finds that person or nobody (findUserViews).
 */
const BY_SCIM_USER_NAME = `select tu.user_id, tu.status, tu.created, tu.updated, u.email, u.first_name, u.last_name,
      true as has_scim, s.user_name, s.user_name_key, s.email_key, s.external_id,
      s.active, s.attributes, s.provisioned, s.created as scim_created, s.updated as scim_updated,
      s.version, ${groupsOf('s.user_id')} as groups
    from scim_users s
    join tenant_users tu on tu.tenant_id = $1 and tu.user_id = s.user_id
    join users u on u.id = s.user_id
    where s.tenant_id = $1 and s.user_name_key = $2`

const TEXTS = {
  userId: viewsOf(CANDIDATES.userId),
  userName: viewsOf(CANDIDATES.userName),
  email: viewsOf(CANDIDATES.email),
  externalId: viewsOf(CANDIDATES.externalId),
}

export type ViewLookup =
  | { userId: string }
  | { userNameKey: string; email: string }
  | { email: string }
  | { externalId: string }

interface ViewRow {
  user_id: string
  status: MembershipStatus
  created: Date
  updated: Date
  email: string
  first_name: string
  last_name: string
  has_scim: boolean
  user_name: string
  user_name_key: string
  email_key: string | null
  external_id: string | null
  active: boolean | null
  attributes: Record<string, unknown>
  provisioned: boolean
  scim_created: Date
  scim_updated: Date
  version: number
  groups: { id: string; display_name: string }[]
}

/** The tenant's members the look-up finds, each as SCIM shows it, in no particular order. */
export async function findUserViews(
  db: Kysely<Database>,
  tenantId: string,
  by: ViewLookup,
): Promise<UserView[]> {
  const run = async (text: string, parameters: unknown[]) =>
    (await db.executeQuery(CompiledQuery.raw(text, parameters) as CompiledQuery<ViewRow>)).rows
  let rows: ViewRow[]
  if ('userNameKey' in by) {
    rows = await run(BY_SCIM_USER_NAME, [tenantId, by.userNameKey])
    if (!rows.some((row) => row.email_key === by.email || row.email === by.email))
      rows = await run(TEXTS.userName, [tenantId, by.userNameKey, by.email])
  } else {
    const [text, parameters] =
      'userId' in by
        ? [TEXTS.userId, [tenantId, by.userId]]
        : 'email' in by
          ? [TEXTS.email, [tenantId, by.email]]
          : [TEXTS.externalId, [tenantId, by.externalId]]
    rows = await run(text, parameters)
  }
  return rows.map((row) => ({
    membership: {
      userId: row.user_id,
      email: row.email,
      firstName: row.first_name,
      lastName: row.last_name,
      status: row.status,
      created: row.created.toISOString(),
      updated: row.updated.toISOString(),
    },
    scim: row.has_scim ? scimRow(tenantId, row) : undefined,
    groups: row.groups,
  }))
}

function scimRow(tenantId: string, row: ViewRow): ScimUserRow {
  return {
    tenant_id: tenantId,
    user_id: row.user_id,
    user_name: row.user_name,
    user_name_key: row.user_name_key,
    email_key: row.email_key,
    external_id: row.external_id,
    active: row.active,
    attributes: row.attributes,
    provisioned: row.provisioned,
    created: row.scim_created,
    updated: row.scim_updated,
    version: row.version,
  }
}
