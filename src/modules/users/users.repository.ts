import { type Kysely, sql, type Transaction, type Updateable } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { Database, NewUserRow, UserRow, UsersTable } from '../../db/schema.js'
import { currentRequest } from '../../http/request-context.js'

/** SQL for platform users. Each function takes the executor (db or transaction) first. */

type Executor = Kysely<Database> | Transaction<Database>

/**
 * Inserts users in one statement and returns the stored rows (with the alias the database issued), in
 * input order. The unique index on the e-mail is the judge of uniqueness under concurrency: a clash is a
 * 409 `email_taken`.
 */
export async function insertUserRows(db: Executor, rows: NewUserRow[]): Promise<UserRow[]> {
  if (rows.length === 0) return []
  const email = rows.length === 1 ? rows[0]?.email : undefined
  return withConstraintErrors(() => db.insertInto('users').values(rows).returningAll().execute(), { email })
}

export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst()
}

/**
 * Which users a caller may see or manage beyond itself: `all`, or the members (any membership status)
 * of these tenants and their descendants.
 */
export type UserScope = { all: true } | { all: false; selfId: string | undefined; subtreesOf: string[] }

export interface UserListFilter {
  scope: UserScope
  id?: string | undefined
  email?: string | undefined
  afterId?: string | undefined
  limit?: number | undefined
}

export async function listUsers(db: Executor, filter: UserListFilter): Promise<UserRow[]> {
  let query = db.selectFrom('users as u').selectAll('u').orderBy('u.id')
  const { scope } = filter
  if (!scope.all) {
    const roots = scope.subtreesOf
    const self = scope.selfId
    if (roots.length === 0 && self === undefined) return []
    query = query.where((eb) => {
      const visible = []
      if (self !== undefined) visible.push(eb('u.id', '=', self))
      if (roots.length > 0) {
        visible.push(
          eb.exists(
            eb
              .selectFrom('tenant_users as tu')
              .innerJoin('tenants as t', 't.id', 'tu.tenant_id')
              .select(sql`1`.as('one'))
              .whereRef('tu.user_id', '=', 'u.id')
              .where((inner) =>
                inner.or([
                  inner('t.id', 'in', roots),
                  sql<boolean>`t.parent_ids && ${sql.val(roots)}::uuid[]`,
                ]),
              ),
          ),
        )
      }
      return eb.or(visible)
    })
  }
  if (filter.id !== undefined) query = query.where('u.id', '=', filter.id)
  if (filter.email !== undefined) query = query.where('u.email', '=', filter.email)
  if (filter.afterId) query = query.where('u.id', '>', filter.afterId)
  if (filter.limit !== undefined) query = query.limit(filter.limit + 1)
  return query.execute()
}

/** Whether the user is within the scope (used for single reads and updates). */
export async function userInScope(db: Executor, userId: string, scope: UserScope): Promise<boolean> {
  if (scope.all) return true
  return (await listUsers(db, { scope, id: userId })).length > 0
}

/**
 * One statement: the write and, when the request carried If-Match, the check that the row is still the
 * version the caller read (etag.ts); `updated` moves on by at least 1 ms per write. 'stale': the row is
 * there but changed since.
 */
export async function updateUser(
  db: Executor,
  id: string,
  changes: Updateable<UsersTable>,
): Promise<UserRow | 'stale' | undefined> {
  const expected = currentRequest()?.ifMatchUpdated
  const updated = changes.updated ?? new Date()
  let query = db
    .updateTable('users')
    .set({ ...changes, updated: sql<Date>`greatest(${updated}, updated + interval '1 millisecond')` })
    .where('id', '=', id)
  if (expected) query = query.where('updated', '=', expected)
  const row = await query.returningAll().executeTakeFirst()
  if (row || !expected) return row
  const exists = await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()
  return exists ? 'stale' : undefined
}
