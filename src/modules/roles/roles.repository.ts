import { type Insertable, type Kysely, sql, type Transaction, type Updateable } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import { keysetPage } from '../../db/keyset.js'
import { nextUpdated } from '../../db/row-version.js'
import type { Database, RoleRow, RolesTable } from '../../db/schema.js'
import { ifMatchChecked } from '../../http/request-context.js'

/** SQL for roles. Each function takes the executor (db or transaction) first. */

type Executor = Kysely<Database> | Transaction<Database>

/** Roles owned by no tenant: the platform roles and the built-in tenant roles. */
export async function listGlobalRoles(db: Executor): Promise<RoleRow[]> {
  return db.selectFrom('roles').selectAll().where('tenant_id', 'is', null).orderBy('id').execute()
}

export async function findRole(db: Executor, id: string): Promise<RoleRow | undefined> {
  return db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst()
}

export interface RoleListFilter {
  scope: 'platform' | 'tenant'
  /** For tenant roles: besides the built-in ones, those this tenant owns… */
  tenantId?: string | undefined
  /** …and the shared ones of these tenants (its ancestors). */
  sharedFromIds?: readonly string[] | undefined
  afterId?: string | undefined
  limit?: number | undefined
}

export async function listRoles(db: Executor, filter: RoleListFilter): Promise<RoleRow[]> {
  const { tenantId } = filter
  const ancestors = filter.sharedFromIds ?? []
  const query = db
    .selectFrom('roles')
    .selectAll()
    .where('scope', '=', filter.scope)
    .where((eb) => {
      const visible = [eb('tenant_id', 'is', null)]
      if (tenantId !== undefined) visible.push(eb('tenant_id', '=', tenantId))
      if (ancestors.length > 0) {
        visible.push(
          eb.and([eb('shared', '=', true), sql<boolean>`tenant_id = any(${sql.val(ancestors)}::uuid[])`]),
        )
      }
      return eb.or(visible)
    })
  return keysetPage(query, 'id', filter).execute()
}

/** Inserts a tenant role; a name taken in the tenant is 409 role_name_taken (unique index). */
export async function insertRole(db: Executor, row: Insertable<RolesTable>): Promise<void> {
  await withConstraintErrors(() => db.insertInto('roles').values(row).execute(), { name: row.name })
}

/**
 * Applies `changes` to a tenant role only if it is still the version read (`updated` unchanged), so the
 * checks made on that version hold for the write — and, when the request carried If-Match, the version
 * the caller named (db/row-version.ts); one statement. Undefined when it moved meanwhile; 'stale' when
 * the If-Match no longer names the stored version.
 */
export async function updateRole(
  db: Executor,
  id: string,
  expectedUpdated: Date,
  changes: Updateable<RolesTable> & { updated: Date },
): Promise<RoleRow | 'stale' | undefined> {
  const { query, outcome } = ifMatchChecked(
    'roles',
    db
      .updateTable('roles')
      .set({ ...changes, updated: nextUpdated(changes.updated) })
      .where('id', '=', id)
      .where('built_in', '=', false)
      .where('updated', '=', expectedUpdated),
  )
  const row = await withConstraintErrors(() => query.returningAll().executeTakeFirst(), {
    name: changes.name as string | undefined,
  })
  return outcome(row)
}

/**
 * Every permission that some holder of the role holds where it holds the role: the platform role's
 * permissions of each user with a membership (any status) in this role, and what the user's accepted
 * memberships grant in that tenant and its ancestors (active tenants, active roles). The ceiling uses it
 * so that nobody changes a role held by someone above them (docs/api.md#tenant-roles).
 */
export async function listHolderPermissions(db: Executor, roleId: string): Promise<string[]> {
  const { rows } = await sql<{ permission: string }>`
    select distinct p.permission from (
      select unnest(pr.permissions) as permission
        from tenant_users h
        join users u on u.id = h.user_id
        join roles pr on pr.id = u.role_id
        where h.role_id = ${roleId}
      union all
      select unnest(case when gr.active then gr.permissions else '{}'::text[] end)
        from tenant_users h
        join tenants ht on ht.id = h.tenant_id
        join tenant_users g on g.user_id = h.user_id and g.status = 'accepted'
          and (g.tenant_id = h.tenant_id or g.tenant_id = any(ht.parent_ids))
        join tenants gt on gt.id = g.tenant_id and gt.active
        join roles gr on gr.id = g.role_id
        where h.role_id = ${roleId}
    ) p
  `.execute(db)
  return rows.map((row) => row.permission)
}
